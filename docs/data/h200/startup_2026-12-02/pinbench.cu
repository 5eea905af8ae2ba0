// How fast can host memory be page-locked? cudaMallocHost against touching the pages on every
// thread (optionally as transparent huge pages) and registering them; and the H2D rate of each.
#include <cuda_runtime.h>
#include <omp.h>
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
int main(int argc, char** argv) {
  const size_t bytes =
      size_t(atof(argc > 1 ? argv[1] : "0.55")) * 0 + size_t(atof(argc > 1 ? argv[1] : "0.55") * (1 << 30));
  const int count = 3;
  cudaFree(0);
  void* dev = nullptr;
  cudaMalloc(&dev, bytes);
  for (int mode = 0; mode < 4; ++mode) {
    void* p[count];
    double t0 = now();
    for (int i = 0; i < count; ++i) {
      if (mode == 0) {
        cudaMallocHost(&p[i], bytes);
      } else {
        p[i] = aligned_alloc(2 << 20, bytes);
        if (mode >= 2) madvise(p[i], bytes, MADV_HUGEPAGE);
        char* c = (char*)p[i];
        if (mode != 3) {
#pragma omp parallel for schedule(static)
          for (long q = 0; q < long(bytes >> 21); ++q) memset(c + (size_t(q) << 21), 0, 2 << 20);
        }
        cudaHostRegister(p[i], bytes, cudaHostRegisterDefault);
      }
    }
    double t1 = now();
    cudaMemcpy(dev, p[0], bytes, cudaMemcpyHostToDevice);
    double t2 = now();
    cudaMemcpy(dev, p[1], bytes, cudaMemcpyHostToDevice);
    double t3 = now();
    cudaError_t e = cudaGetLastError();
    printf("mode %d (%s): pin %d x %.2f GB in %.3f s (%.3f s/GB); H2D %.1f, %.1f GB/s; %s\n", mode,
           mode == 0   ? "cudaMallocHost"
           : mode == 1 ? "touch on threads + register"
           : mode == 2 ? "THP, touch + register"
                       : "THP, register untouched",
           count, bytes / 1e9, t1 - t0, (t1 - t0) / (count * bytes / 1e9), bytes / (t2 - t1) / 1e9,
           bytes / (t3 - t2) / 1e9, cudaGetErrorString(e));
    double t4 = now();
    for (int i = 0; i < count; ++i) {
      if (mode == 0)
        cudaFreeHost(p[i]);
      else {
        cudaHostUnregister(p[i]);
        free(p[i]);
      }
    }
    printf("   free %.3f s\n", now() - t4);
  }
}
