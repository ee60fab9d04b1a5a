// A one-thread kernel that spins until the host sets *flag (pinned, mapped host memory). Queued
// ahead of a batch of launches, it lets the host enqueue the whole batch before the GPU starts, so
// the events around each launch time the kernel, not the host's launch overhead.
extern "C" __global__ void hold_until(const volatile int* flag) {
    while (*flag == 0) {
    }
}

// A kernel that does nothing: its back-to-back time is the launch overhead alone.
extern "C" __global__ void empty_launch() {}

// Every thread spins for `cycles` SM clock cycles: a kernel of a chosen length, launched before a
// launch whose fixed cost is measured (gpu_validate.overheads --after).
extern "C" __global__ void spin_cycles(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
