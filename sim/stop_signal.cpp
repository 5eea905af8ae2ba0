#include "sim/stop_signal.hpp"

#include "base/env.hpp"

#include <csignal>
#include <cstdlib>
#include <string>

namespace tiersim {

namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_stop != 0) {
    // Asked twice: stop now, as the signal would have without a handler.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_stop = sig;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a write in progress goes on; the loop looks at the request
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_signal() { return g_stop; }

void clear_stop_request() { g_stop = 0; }

const char* signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  return "a signal";
}

void raise_test_signal(const char* where, long long step) {
  const char* v = std::getenv(env::kTestSignalAt);
  if (!v) return;
  const std::string want = step < 0 ? std::string(where) : std::string(where) + ":" + std::to_string(step);
  if (want == v) std::raise(SIGTERM);
  if (want + ":KILL" == v) std::raise(SIGKILL);
}

}  // namespace tiersim
