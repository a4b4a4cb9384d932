/* numoracle GPU layer: the CPU simulator (see hip/nmo_hip_sim.h). One fiber per GPU
 * thread (ucontext), blocks run one after another, a round-robin scheduler; a round in
 * which no fiber arrives at, passes or finishes anything is a deadlock (reported as a
 * launch failure). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include <vector>

#include "nmo_hip.h"

thread_local nmo_sim_thread *nmo_sim_cur;
thread_local nmo_sim_u3 nmo_sim_bid, nmo_sim_bdim, nmo_sim_gdim;

namespace {

constexpr int W = NMO_SIM_WARP;
constexpr size_t STACK = 128 * 1024;

struct Fiber {
    ucontext_t ctx;
    nmo_sim_thread t;
    bool done;
};
struct WarpX {
    uint32_t val[2][64];
    int arr[2], left[2];
    bool ready[2];
    int live;
};
struct Block {
    std::vector<Fiber> f;
    std::vector<WarpX> w;
    std::vector<char *> stacks;
    int live = 0, bar_count = 0;
    uint64_t bar_gen = 0, progress = 0;
    const std::function<void()> *body = nullptr;
    ucontext_t sched;
    Fiber *cur = nullptr;
};
thread_local Block *B;
thread_local hipError_t last_error;
thread_local char last_msg[256];

void yield() { swapcontext(&B->cur->ctx, &B->sched); }

void release_waits(int warp)
{
    if (B->bar_count > 0 && B->bar_count == B->live) {
        B->bar_count = 0;
        B->bar_gen++;
        B->progress++;
    }
    WarpX &w = B->w[warp];
    for (int s = 0; s < 2; s++)
        if (w.arr[s] > 0 && !w.ready[s] && w.arr[s] == w.live) {
            w.ready[s] = true;
            B->progress++;
        }
}

void fiber_entry(int idx)
{
    (*B->body)();
    Fiber &f = B->f[(size_t)idx];
    f.done = true;
    B->live--;
    B->w[(size_t)f.t.warp].live--;
    B->progress++;
    release_waits(f.t.warp);
    /* returning resumes uc_link: the scheduler */
}

/* Runs one block; false on a deadlock. */
bool run_block(unsigned n, const std::function<void()> &body)
{
    Block &b = *B;
    b.body = &body;
    b.f.assign(n, Fiber());
    b.w.assign((n + W - 1) / W, WarpX());
    while (b.stacks.size() < n) b.stacks.push_back((char *)malloc(STACK));
    b.live = (int)n;
    b.bar_count = 0;
    for (unsigned i = 0; i < n; i++) {
        Fiber &f = b.f[i];
        f.done = false;
        f.t.tid = nmo_sim_u3{i % nmo_sim_bdim.x, (i / nmo_sim_bdim.x) % nmo_sim_bdim.y,
                             i / (nmo_sim_bdim.x * nmo_sim_bdim.y)};
        f.t.linear = (int)i;
        f.t.lane = (int)(i % W);
        f.t.warp = (int)(i / W);
        f.t.xgen = 0;
        b.w[i / W].live++;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = b.stacks[i];
        f.ctx.uc_stack.ss_size = STACK;
        f.ctx.uc_link = &b.sched;
        makecontext(&f.ctx, (void (*)())fiber_entry, 1, (int)i);
    }
    for (;;) {
        bool any = false;
        uint64_t p0 = b.progress;
        for (unsigned i = 0; i < n; i++) {
            Fiber &f = b.f[i];
            if (f.done) continue;
            any = true;
            b.cur = &f;
            nmo_sim_cur = &f.t;
            swapcontext(&b.sched, &f.ctx);
        }
        if (!any) return true;
        if (b.progress == p0) return false;
    }
}

double now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
} // namespace

struct nmo_sim_event {
    double ms;
};

void __syncthreads(void)
{
    uint64_t g = B->bar_gen;
    B->bar_count++;
    B->progress++;
    if (B->bar_count == B->live) {
        B->bar_count = 0;
        B->bar_gen++;
        return;
    }
    while (B->bar_gen == g) yield();
}

uint32_t nmo_sim_xchg(uint32_t v, int src)
{
    nmo_sim_thread *t = nmo_sim_cur;
    WarpX &w = B->w[(size_t)t->warp];
    const int s = (int)(t->xgen & 1u);
    t->xgen++;
    w.val[s][t->lane] = v;
    w.arr[s]++;
    B->progress++;
    if (w.arr[s] == w.live) w.ready[s] = true;
    while (!w.ready[s]) yield();
    uint32_t r = w.val[s][src >= 0 && src < W ? src : t->lane];
    w.left[s]++;
    if (w.left[s] == w.arr[s]) {
        w.arr[s] = w.left[s] = 0;
        w.ready[s] = false;
    }
    return r;
}

uint64_t nmo_sim_ballot(int pred)
{
    uint64_t m = 0;
    for (int l = 0; l < W; l++)
        if (nmo_sim_xchg(pred != 0, l)) m |= 1ull << l;
    return m;
}

void nmo_sim_launch(dim3 grid, dim3 block, const std::function<void()> &body)
{
    const unsigned long n = (unsigned long)block.x * block.y * block.z;
    if (n == 0 || n > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
        grid.y > 65535 || grid.z > 65535) {
        last_error = hipErrorInvalidConfiguration;
        snprintf(last_msg, sizeof last_msg, "invalid configuration");
        return;
    }
    static thread_local Block blk;
    Block *saved = B;
    B = &blk;
    nmo_sim_gdim = nmo_sim_u3{grid.x, grid.y, grid.z};
    nmo_sim_bdim = nmo_sim_u3{block.x, block.y, block.z};
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                nmo_sim_bid = nmo_sim_u3{x, y, z};
                if (!run_block((unsigned)n, body)) {
                    last_error = hipErrorLaunchFailure;
                    snprintf(last_msg, sizeof last_msg,
                             "deadlock in block (%u,%u,%u): a barrier or warp exchange not reached by every thread",
                             x, y, z);
                    B = saved;
                    return;
                }
            }
    B = saved;
}

extern "C" {

hipError_t hipMalloc(void **p, size_t n)
{
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    return *p ? hipSuccess : hipErrorOutOfMemory;
}
hipError_t hipFree(void *p)
{
    free(p);
    return hipSuccess;
}
hipError_t hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k)
{
    (void)k;
    memmove(d, s, n);
    return hipSuccess;
}
hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t st)
{
    (void)st;
    return hipMemcpy(d, s, n, k);
}
hipError_t hipMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return hipSuccess;
}
hipError_t hipMemsetAsync(void *p, int v, size_t n, hipStream_t st)
{
    (void)st;
    return hipMemset(p, v, n);
}
hipError_t hipGetLastError(void)
{
    hipError_t e = last_error;
    last_error = hipSuccess;
    return e;
}
hipError_t hipPeekAtLastError(void) { return last_error; }
const char *hipGetErrorString(hipError_t e)
{
    switch (e) {
    case hipSuccess: return "no error";
    case hipErrorInvalidValue: return "invalid argument";
    case hipErrorOutOfMemory: return "out of memory";
    case hipErrorInvalidConfiguration: return "invalid configuration argument";
    case hipErrorLaunchFailure: return last_msg[0] ? last_msg : "launch failure";
    case hipErrorNotSupported: return "operation not supported";
    default: return "unknown error";
    }
}
const char *hipGetErrorName(hipError_t e)
{
    switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorInvalidValue: return "hipErrorInvalidValue";
    case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
    case hipErrorInvalidConfiguration: return "hipErrorInvalidConfiguration";
    case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
    case hipErrorNotSupported: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
    }
}
hipError_t hipDeviceSynchronize(void) { return hipSuccess; }
hipError_t hipGetDevice(int *d)
{
    *d = 0;
    return hipSuccess;
}
hipError_t hipSetDevice(int d) { return d == 0 ? hipSuccess : hipErrorInvalidValue; }
hipError_t hipGetDeviceCount(int *n)
{
    *n = 1;
    return hipSuccess;
}
hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int d)
{
    if (d != 0) return hipErrorInvalidValue;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "numoracle CPU simulator (fibers, warp %d)", W);
    snprintf(p->gcnArchName, sizeof p->gcnArchName, "sim-wave%d", W);
    p->warpSize = W;
    p->multiProcessorCount = 1;
    return hipSuccess;
}
hipError_t hipDriverGetVersion(int *v)
{
    *v = 0;
    return hipSuccess;
}
hipError_t hipRuntimeGetVersion(int *v)
{
    *v = 0;
    return hipSuccess;
}
hipError_t hipStreamCreate(hipStream_t *s)
{
    *s = nullptr;
    return hipSuccess;
}
hipError_t hipStreamDestroy(hipStream_t s)
{
    (void)s;
    return hipSuccess;
}
hipError_t hipStreamSynchronize(hipStream_t s)
{
    (void)s;
    return hipSuccess;
}
hipError_t hipEventCreate(hipEvent_t *e)
{
    *e = new nmo_sim_event{0.0};
    return hipSuccess;
}
hipError_t hipEventDestroy(hipEvent_t e)
{
    delete e;
    return hipSuccess;
}
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s)
{
    (void)s;
    e->ms = now_ms();
    return hipSuccess;
}
hipError_t hipEventSynchronize(hipEvent_t e)
{
    (void)e;
    return hipSuccess;
}
hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
    *ms = (float)(b->ms - a->ms);
    return hipSuccess;
}

} // extern "C"
