// Hardware counters per kernel through the CUPTI Range Profiler of CUDA 13
// (cupti_range_profiler.h + cupti_profiler_host.h): auto range (one range per kernel launch)
// and kernel replay (CUPTI saves the memory a kernel may write, runs it once per pass of the
// metric set and restores the memory in between). See kernels/hw_counters.hpp.
//
// The chain: cuptiProfilerInitialize -> cuptiProfilerDeviceSupported -> chip name and counter
// availability image (the first call that needs the permission to read counters) -> host object
// -> config image for the metrics; per begin(): cuptiRangeProfilerEnable on the context,
// counter data image, SetConfig, Start; per end(): Stop, DecodeData, evaluate each range,
// Disable. The range profiler is enabled only between begin() and end(), so the rest of a run
// pays nothing for it. libcupti loads libnvperf_host.so from its own directory at run time
// (scripts/bundle must carry it).
#include "base/env.hpp"
#include "kernels/hw_counters.hpp"

#include <cuda_runtime.h>
#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/device_info.hpp"
#include "base/error.hpp"

#if defined(TIERSIM_HAVE_CUPTI)
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#endif

// ---- The probe: a known memory-bound operation ------------------------------------------------
// extern "C": the names CUPTI reports are these, unmangled, whatever the compiler.
extern "C" __global__ void tiersim_counter_probe_fill(float4* __restrict__ out, std::size_t n4) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const float f = static_cast<float>(i & 0xFFFFF) + 1.0f;
    out[i] = make_float4(f, f + 0.25f, f + 0.5f, f + 0.75f);
  }
}

extern "C" __global__ void tiersim_counter_probe_copy(const float4* __restrict__ in, float4* __restrict__ out,
                                                      std::size_t n4) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride)
    out[i] = in[i];
}

namespace tiersim {

namespace {

struct DeviceAllocation {
  void* p = nullptr;
  DeviceAllocation() = default;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  ~DeviceAllocation() {
    if (p) cudaFree(p);
  }
};

}  // namespace

double run_counter_probe_copy(std::size_t bytes) {
  const DeviceInfo d = query_device();
  if (!d.usable) throw Error("no GPU: " + d.why_not);
  const std::size_t n4 = bytes / sizeof(float4);
  if (n4 == 0) throw Error("run_counter_probe_copy: " + std::to_string(bytes) + " bytes is less than one float4");
  const std::size_t used = n4 * sizeof(float4);
  const std::string what = "counter probe, 2 x " + std::to_string(used) + " bytes";
  DeviceAllocation in, out;
  TIERSIM_CUDA_CHECK(cudaMalloc(&in.p, used), what);
  TIERSIM_CUDA_CHECK(cudaMalloc(&out.p, used), what);
  constexpr int kThreads = 256;
  const std::size_t want_blocks = (n4 + kThreads - 1) / kThreads;
  const int blocks =
      static_cast<int>(std::min<std::size_t>(want_blocks, static_cast<std::size_t>(std::max(d.sm_count, 1)) * 32));
  auto* in4 = static_cast<float4*>(in.p);
  auto* out4 = static_cast<float4*>(out.p);
  tiersim_counter_probe_fill<<<blocks, kThreads>>>(in4, n4);
  TIERSIM_CUDA_CHECK_LAUNCH("tiersim_counter_probe_fill", what);
  TIERSIM_CUDA_CHECK(cudaDeviceSynchronize(), what);

  cudaEvent_t start = nullptr, stop = nullptr;
  TIERSIM_CUDA_CHECK(cudaEventCreate(&start));
  TIERSIM_CUDA_CHECK(cudaEventCreate(&stop));
  float ms = 0;
  try {
    TIERSIM_CUDA_CHECK(cudaEventRecord(start));
    tiersim_counter_probe_copy<<<blocks, kThreads>>>(in4, out4, n4);
    TIERSIM_CUDA_CHECK_LAUNCH("tiersim_counter_probe_copy", what);
    TIERSIM_CUDA_CHECK(cudaEventRecord(stop));
    TIERSIM_CUDA_CHECK(cudaEventSynchronize(stop), what);
    TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    // The copy really happened: first, middle and last float4 as the fill wrote them.
    for (const std::size_t i : {std::size_t{0}, n4 / 2, n4 - 1}) {
      float4 v{};
      TIERSIM_CUDA_CHECK(cudaMemcpy(&v, out4 + i, sizeof v, cudaMemcpyDeviceToHost), what);
      const float f = static_cast<float>(i & 0xFFFFF) + 1.0f;
      if (v.x != f || v.w != f + 0.75f)
        throw Error("counter probe copy: element " + std::to_string(i) + " is " + std::to_string(v.x) + ", expected " +
                    std::to_string(f));
    }
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

#if !defined(TIERSIM_HAVE_CUPTI)

std::unique_ptr<HardwareCounters> make_hardware_counters(std::string* why_not, std::size_t) {
  if (why_not) *why_not = "built without CUPTI (no CUDA::cupti target when tiersim was configured)";
  return nullptr;
}

#else  // TIERSIM_HAVE_CUPTI

namespace {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string result = (status == 0 && out) ? std::string(out) : name;
  std::free(out);
  return result;
}

// A CUPTI call failed: the message is already the one a user reads.
struct Unavailable : Error {
  using Error::Error;
};

std::string cupti_result_name(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

// What a user should read when `call` failed with r.
std::string explain(CUptiResult r, const std::string& call) {
  const std::string detail = call + ": " + cupti_result_name(r);
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "profiling not permitted (ERR_NVGPUCTRPERM): the driver restricts GPU performance counters to "
             "administrators here (run as root, or load nvidia with NVreg_RestrictProfilingToAdminUsers=0) [" +
             detail + "]";
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return "profiling not supported on this device or configuration [" + detail + "]";
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "profiling unavailable: another profiler (Nsight Compute/Systems?) or CUPTI user holds the device [" +
             detail + "]";
    default:
      return "hardware counters unavailable [" + detail + "]";
  }
}

#define TIERSIM_CUPTI_CHECK(call)                                   \
  do {                                                              \
    const CUptiResult r_ = (call);                                  \
    if (r_ != CUPTI_SUCCESS) throw Unavailable(explain(r_, #call)); \
  } while (0)

// The context current on this thread (the runtime's primary context once cudaFree(0) ran),
// through the driver entry point: tiersim links the CUDA runtime statically and not libcuda.
CUcontext current_context() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  TIERSIM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q),
                     "hardware counters: looking up cuCtxGetCurrent");
  if (!fn || q != cudaDriverEntryPointSuccess)
    throw Unavailable("hardware counters unavailable: no cuCtxGetCurrent in the driver");
  CUcontext ctx = nullptr;
  const CUresult r = reinterpret_cast<CUresult (*)(CUcontext*)>(fn)(&ctx);
  if (r != CUDA_SUCCESS || !ctx) throw Unavailable("hardware counters unavailable: no current CUDA context");
  return ctx;
}

void profiler_initialize_once() {
  static std::once_flag once;
  static CUptiResult result = CUPTI_SUCCESS;
  std::call_once(once, [] {
    CUpti_Profiler_Initialize_Params p{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    result = cuptiProfilerInitialize(&p);
  });
  if (result != CUPTI_SUCCESS) throw Unavailable(explain(result, "cuptiProfilerInitialize"));
}

const char* level_name(CUpti_Profiler_Support_Level l) {
  switch (l) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled by the system";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    default:
      return "unknown";
  }
}

void check_device_supported(int device) {
  CUpti_Profiler_DeviceSupported_Params p{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  p.cuDevice = static_cast<CUdevice>(device);
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  TIERSIM_CUPTI_CHECK(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
  std::string why;
  const std::pair<const char*, CUpti_Profiler_Support_Level> parts[] = {
      {"architecture", p.architecture},
      {"SLI", p.sli},
      {"vGPU", p.vGpu},
      {"confidential computing", p.confidentialCompute},
      {"CMP", p.cmp},
      {"WSL", p.wsl}};
  for (const auto& [what, level] : parts)
    if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      why += std::string(why.empty() ? "" : ", ") + what + ": " + level_name(level);
  throw Unavailable("profiling not supported on this device (" +
                    (why.empty() ? std::string(level_name(p.isSupported)) : why) + ")");
}

// Kernel names in launch order from the launch callbacks, for ranges whose CUPTI name is not
// a function name. A runtime launch also issues the driver launch inside it: counted once.
struct LaunchNames {
  std::mutex mutex;
  std::vector<std::string> names;
};
thread_local int t_runtime_launch_depth = 0;

bool is_launch(const char* function, bool runtime) {
  if (!function) return false;
  const std::string f = function;
  if (f.find("MultiDevice") != std::string::npos) return false;
  if (runtime)
    return f.find("cudaLaunchKernel") != std::string::npos ||
           f.find("cudaLaunchCooperativeKernel") != std::string::npos;
  return f.rfind("cuLaunchKernel", 0) == 0 || f.rfind("cuLaunchCooperativeKernel", 0) == 0;
}

void CUPTIAPI on_api_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  auto* rec = static_cast<LaunchNames*>(user);
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if ((!runtime && domain != CUPTI_CB_DOMAIN_DRIVER_API) || !is_launch(cb->functionName, runtime)) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (runtime || t_runtime_launch_depth == 0) {
      std::lock_guard lock(rec->mutex);
      rec->names.emplace_back(cb->symbolName ? cb->symbolName : "");
    }
    if (runtime) ++t_runtime_launch_depth;
  } else if (runtime && t_runtime_launch_depth > 0) {
    --t_runtime_launch_depth;
  }
}

// TIERSIM_COUNTERS_VERBOSE=1: the chip, the passes and each range's names on stderr.
bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv(env::kCountersVerbose);
    return e && *e && *e != '0';
  }();
  return v;
}

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

class CuptiRangeCounters final : public HardwareCounters {
 public:
  explicit CuptiRangeCounters(std::size_t max_ranges) : max_ranges_(std::max<std::size_t>(max_ranges, 1)) {
    const DeviceInfo d = query_device();
    if (!d.usable) throw Unavailable("no GPU: " + d.why_not);
    TIERSIM_CUDA_CHECK(cudaGetDevice(&device_));
    TIERSIM_CUDA_CHECK(cudaFree(nullptr), "hardware counters: creating the context");
    ctx_ = current_context();
    profiler_initialize_once();
    check_device_supported(device_);

    CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = static_cast<std::size_t>(device_);
    TIERSIM_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
    chip_ = chip.pChipName ? chip.pChipName : "";

    // Counter availability: the first call that needs the permission to read counters.
    CUpti_Profiler_GetCounterAvailability_Params avail{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    avail.ctx = ctx_;
    TIERSIM_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));
    availability_.assign(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = availability_.data();
    TIERSIM_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));

    CUpti_Profiler_Host_Initialize_Params host{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host.pChipName = chip_.c_str();
    host.pCounterAvailabilityImage = availability_.data();
    {
      const CUptiResult r = cuptiProfilerHostInitialize(&host);
      if (r != CUPTI_SUCCESS)
        throw Unavailable(
            explain(r, "cuptiProfilerHostInitialize (chip " + chip_ + "; needs libnvperf_host.so beside libcupti)"));
    }
    host_ = host.pHostObject;

    // Metrics this chip knows; the DRAM bytes are required, the others are filled when known.
    for (const char* m : {kDramRead, kDramWrite, kL2HitRate, kDuration}) {
      CUpti_Profiler_Host_GetMetricProperties_Params props{CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
      props.pHostObject = host_;
      props.pMetricName = m;
      if (cuptiProfilerHostGetMetricProperties(&props) == CUPTI_SUCCESS)
        metrics_.push_back(m);
      else if (m == kDramRead || m == kDramWrite)
        throw Unavailable(std::string("hardware counters unavailable: chip ") + chip_ + " has no metric " + m);
      else
        std::fprintf(stderr, "tiersim: hardware counters: chip %s has no metric %s; reported as 0\n", chip_.c_str(), m);
    }
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = host_;
    add.ppMetricNames = metrics_.data();
    add.numMetrics = metrics_.size();
    TIERSIM_CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics(&add));
    CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = host_;
    TIERSIM_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
    if (size.configImageSize == 0)
      throw Unavailable("hardware counters unavailable: CUPTI made an empty config image for chip " + chip_);
    config_.assign(size.configImageSize, 0);
    CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = host_;
    image.configImageSize = config_.size();
    image.pConfigImage = config_.data();
    TIERSIM_CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&image));
    CUpti_Profiler_Host_GetNumOfPasses_Params passes{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    passes.configImageSize = config_.size();
    passes.pConfigImage = config_.data();
    if (cuptiProfilerHostGetNumOfPasses(&passes) == CUPTI_SUCCESS) passes_ = passes.numOfPasses;
  }

  ~CuptiRangeCounters() override {
    if (range_) {
      if (started_) {
        CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        stop.pRangeProfilerObject = range_;
        cuptiRangeProfilerStop(&stop);
      }
      disable();
    }
    unsubscribe();
    if (host_) {
      CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      p.pHostObject = host_;
      cuptiProfilerHostDeinitialize(&p);
    }
  }

  void begin() override {
    if (range_) throw Error("hardware counters: begin() called twice without end()");
    TIERSIM_CUDA_CHECK(cudaDeviceSynchronize(), "hardware counters: before begin()");
    CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    enable.ctx = ctx_;
    TIERSIM_CUPTI_CHECK(cuptiRangeProfilerEnable(&enable));
    range_ = enable.pRangeProfilerObject;
    try {
      CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
      size.pRangeProfilerObject = range_;
      size.pMetricNames = metrics_.data();
      size.numMetrics = metrics_.size();
      size.maxNumOfRanges = max_ranges_;
      size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_ranges_);
      TIERSIM_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
      counter_data_.assign(size.counterDataSize, 0);
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
          CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
      init.pRangeProfilerObject = range_;
      init.counterDataSize = counter_data_.size();
      init.pCounterData = counter_data_.data();
      TIERSIM_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));

      CUpti_RangeProfiler_SetConfig_Params config{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
      config.pRangeProfilerObject = range_;
      config.configSize = config_.size();
      config.pConfig = config_.data();
      config.counterDataImageSize = counter_data_.size();
      config.pCounterDataImage = counter_data_.data();
      config.range = CUPTI_AutoRange;
      config.replayMode = CUPTI_KernelReplay;
      config.maxRangesPerPass = max_ranges_;
      config.numNestingLevels = 1;
      config.minNestingLevel = 1;
      config.passIndex = 0;
      config.targetNestingLevel = 1;
      TIERSIM_CUPTI_CHECK(cuptiRangeProfilerSetConfig(&config));
      subscribe();
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = range_;
      TIERSIM_CUPTI_CHECK(cuptiRangeProfilerStart(&start));
      started_ = true;
    } catch (...) {
      unsubscribe();
      disable();
      throw;
    }
  }

  std::vector<KernelCounters> end() override {
    if (!range_ || !started_) throw Error("hardware counters: end() without begin()");
    std::vector<KernelCounters> rows;
    try {
      TIERSIM_CUDA_CHECK(cudaDeviceSynchronize(), "hardware counters: kernels under profiling");
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = range_;
      TIERSIM_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
      started_ = false;
      CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
      decode.pRangeProfilerObject = range_;
      if (const CUptiResult r = cuptiRangeProfilerDecodeData(&decode); r != CUPTI_SUCCESS) {
        // Nothing was launched (the launch callbacks saw no kernel): no ranges, not an error.
        bool none_launched = false;
        if (subscriber_) {
          std::lock_guard lock(names_.mutex);
          none_launched = names_.names.empty();
        }
        if (!none_launched) throw Unavailable(explain(r, "cuptiRangeProfilerDecodeData"));
        unsubscribe();
        disable();
        return rows;
      }
      if (decode.numOfRangeDropped > 0)
        std::fprintf(stderr,
                     "tiersim: hardware counters: %zu kernel launches dropped (more than %zu in one range set)\n",
                     decode.numOfRangeDropped, max_ranges_);
      unsubscribe();

      CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
      info.pCounterDataImage = counter_data_.data();
      info.counterDataImageSize = counter_data_.size();
      TIERSIM_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
      std::vector<std::string> launched;
      {
        std::lock_guard lock(names_.mutex);
        launched.swap(names_.names);
      }
      std::vector<double> values(metrics_.size());
      for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range{
            CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
        range.pCounterDataImage = counter_data_.data();
        range.counterDataImageSize = counter_data_.size();
        range.rangeIndex = i;
        range.rangeDelimiter = "/";
        TIERSIM_CUPTI_CHECK(cuptiRangeProfilerCounterDataGetRangeInfo(&range));
        CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        eval.pHostObject = host_;
        eval.pCounterDataImage = counter_data_.data();
        eval.counterDataImageSize = counter_data_.size();
        eval.rangeIndex = i;
        eval.ppMetricNames = metrics_.data();
        eval.numMetrics = metrics_.size();
        eval.pMetricValues = values.data();
        TIERSIM_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));

        KernelCounters k;
        std::string name = range.rangeName ? range.rangeName : "";
        // Auto-range names are the kernels' function names; where CUPTI gives an index or
        // nothing instead, the launch callbacks' names in the same order stand in.
        if (verbose())
          std::fprintf(stderr, "tiersim: hardware counters: range %zu: CUPTI name \"%s\", launch callback \"%s\"\n", i,
                       name.c_str(), i < launched.size() ? launched[i].c_str() : "(none)");
        if ((name.empty() || is_number(name)) && i < launched.size() && !launched[i].empty()) name = launched[i];
        k.kernel = demangle(name);
        for (std::size_t m = 0; m < metrics_.size(); ++m) {
          const std::string metric = metrics_[m];
          if (metric == kDramRead)
            k.dram_read_bytes = values[m];
          else if (metric == kDramWrite)
            k.dram_write_bytes = values[m];
          else if (metric == kL2HitRate)
            k.l2_hit_rate = std::clamp(values[m] / 100.0, 0.0, 1.0);  // stores can read 100.4%
          else if (metric == kDuration)
            k.duration_ms = values[m] / 1e6;  // ns
        }
        rows.push_back(std::move(k));
      }
    } catch (...) {
      unsubscribe();
      disable();
      throw;
    }
    disable();
    return rows;
  }

  const std::string& chip() const { return chip_; }
  std::size_t passes() const { return passes_; }

 private:
  static constexpr const char* kDramRead = "dram__bytes_read.sum";
  static constexpr const char* kDramWrite = "dram__bytes_write.sum";
  static constexpr const char* kL2HitRate = "lts__t_sector_hit_rate.pct";
  static constexpr const char* kDuration = "gpu__time_duration.sum";

  void disable() {
    if (!range_) return;
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = range_;
    cuptiRangeProfilerDisable(&p);
    range_ = nullptr;
    started_ = false;
  }

  // Launch callbacks for the kernel names; optional (another CUPTI subscriber, e.g. a tool,
  // may hold the one slot): without them the names are CUPTI's range names.
  void subscribe() {
    {
      std::lock_guard lock(names_.mutex);
      names_.names.clear();
    }
    if (subscriber_) return;
    if (cuptiSubscribe(&subscriber_, on_api_callback, &names_) != CUPTI_SUCCESS) {
      subscriber_ = nullptr;
      return;
    }
    cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
  }
  void unsubscribe() {
    if (!subscriber_) return;
    cuptiUnsubscribe(subscriber_);
    subscriber_ = nullptr;
  }

  std::size_t max_ranges_;
  int device_ = 0;
  CUcontext ctx_ = nullptr;
  std::string chip_;
  std::vector<uint8_t> availability_, config_, counter_data_;
  std::vector<const char*> metrics_;
  std::size_t passes_ = 0;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* range_ = nullptr;
  bool started_ = false;
  LaunchNames names_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

}  // namespace

std::unique_ptr<HardwareCounters> make_hardware_counters(std::string* why_not, std::size_t max_kernels_per_range) {
  try {
    auto counters = std::make_unique<CuptiRangeCounters>(max_kernels_per_range);
    // Prove the whole chain on a tiny probe (fill + copy of 1 MiB): permissions and replay
    // show up here, once, rather than in the middle of a run.
    counters->begin();
    try {
      run_counter_probe_copy(std::size_t{1} << 20);
    } catch (...) {
      counters->end();
      throw;
    }
    const std::vector<KernelCounters> rows = counters->end();
    if (rows.size() != 2)
      throw Unavailable("hardware counters unavailable: CUPTI returned " + std::to_string(rows.size()) +
                        " ranges for 2 probe kernels on chip " + counters->chip());
    if (verbose())
      std::fprintf(stderr,
                   "tiersim: hardware counters through the CUPTI Range Profiler, chip %s, %zu pass(es) per kernel\n",
                   counters->chip().c_str(), counters->passes());
    if (why_not) why_not->clear();
    return counters;
  } catch (const std::exception& e) {
    if (why_not) *why_not = e.what();
    return nullptr;
  }
}

#endif  // TIERSIM_HAVE_CUPTI

}  // namespace tiersim
