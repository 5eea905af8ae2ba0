// SIGINT and SIGTERM: a request to stop, honoured where stopping leaves everything whole.
//
// main() installs the handlers first thing, before parsing and set-up, so that a signal at any
// moment is a request, never a silent death: before the output directory is touched the run is
// refused with one line and nothing written; once the run has started, the time loop finishes the
// step it is in and ends with the snapshot, checkpoint and summary of that same step. A second
// signal while the first is being honoured ends the process at once (the files it leaves are
// those of a run killed at that moment: complete up to the last snapshot).
#pragma once

namespace tiersim {

// Installs the handlers of SIGINT and SIGTERM (idempotent).
void install_stop_handlers();

// The signal asked to stop with (SIGINT, SIGTERM), or 0.
int stop_signal();

// "SIGINT", "SIGTERM", or "signal N".
const char* signal_name(int sig);

// Forgets a request (tiersim compare runs several cases in one process; tests).
void clear_stop_request();

// Tests only: with TIERSIM_TEST_SIGNAL_AT=<where> (or <where>:<step>) in the environment, raises
// SIGTERM at that point of a run: "setup" (after the case is read, before anything is written),
// "diagnostics:N" (in the diagnostics of step N, after the step decided whether it is the last),
// "writing:N" (on the output thread, between step N's snapshot and its checkpoint); with ":KILL"
// after it, SIGKILL instead.
void raise_test_signal(const char* where, long long step = -1);

}  // namespace tiersim
