// A one-thread kernel that spins until the host sets *flag (pinned, mapped host memory). Queued
// ahead of a batch of launches, it lets the host enqueue the whole batch before the GPU starts, so
// the events around each launch time the kernel, not the host's launch overhead.
extern "C" __global__ void hold_until(const volatile int* flag) {
    while (*flag == 0) {
    }
}

// A kernel that does nothing: its back-to-back time is the launch overhead alone.
extern "C" __global__ void empty_launch() {}

// The empty kernel but for one store: thread 0 of every `every`-th block writes one word of its own
// 256-byte line (gpu_validate.overheads --stores: what a launch whose blocks store costs beyond one
// that does not).
extern "C" __global__ void store_launch(int* words, int every) {
    if (threadIdx.x == 0 && blockIdx.x % every == 0) words[blockIdx.x * 64] = 1;
}

__device__ __forceinline__ void spin_for(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

// spin_cycles with thread 0 of every block touching one word of its own line: before the spin (a store
// with `access` 1, a load with 0, whose value the spin's length takes in so it is not dropped) or after
// it (a store, `access` 2). Is a store paid while it is in flight, or when the launch ends?
extern "C" __global__ void touch_and_spin(int* words, long long cycles, int access) {
    int* word = words + blockIdx.x * 64;
    long long extra = 0;
    if (threadIdx.x == 0 && access == 1) *word = 1;
    if (threadIdx.x == 0 && access == 0) extra = __ldcg(word) & 1;
    spin_for(cycles + extra);
    if (threadIdx.x == 0 && access == 2) *word = 1;
}

// Every thread spins for `cycles` SM clock cycles: a kernel of a chosen length, launched before a
// launch whose fixed cost is measured (gpu_validate.overheads --after).
extern "C" __global__ void spin_cycles(long long cycles) { spin_for(cycles); }
