/* comm.c — collective communication time from the hardware's interconnect
 * fields (bandwidth per direction per device B, per-step latency α), with
 * the ring and pairwise algorithms NCCL and RCCL run inside one scale-up
 * domain.  S is the collective's buffer as NCCL-tests sizes it
 * (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md, whose
 * bus bandwidth factors these are) and n the devices taking part:
 *   all-reduce       2(n−1)/n · S/B + 2(n−1)·α   (reduce-scatter then all-gather)
 *   all-gather       (n−1)/n · S/B + (n−1)·α     S = the gathered output
 *   reduce-scatter   (n−1)/n · S/B + (n−1)·α     S = the full input
 *   all-to-all       S/B + (n−1)·α               S = what one device sends to the others
 *   point-to-point   S/B + α
 * The step counts are NCCL's (src/graph/tuning.cc: nsteps 2(n−1) for
 * all-reduce, n−1 for all-gather and reduce-scatter).  NCCL's fixed base
 * latency per call and its protocol choice are not modelled. */
#include "llm.h"

double llm_collective_time_s(llm_collective kind, double bytes, int64_t n, const opm_interconnect *ic)
{
    if (!ic || ic->bandwidth_bytes_per_s <= 0 || bytes <= 0 || n < 2) return 0;
    double steps = (double)(n - 1), b = ic->bandwidth_bytes_per_s, a = ic->latency_s;
    switch (kind) {
    case LLM_ALL_REDUCE: return 2.0 * steps / (double)n * bytes / b + 2.0 * steps * a;
    case LLM_ALL_GATHER:
    case LLM_REDUCE_SCATTER: return steps / (double)n * bytes / b + steps * a;
    case LLM_ALL_TO_ALL: return bytes / b + steps * a;
    case LLM_P2P: return bytes / b + a;
    }
    return 0;
}
