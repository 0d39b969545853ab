/* trace_ranks.c — a multi-rank report (ranks.c) as one JSON document and
 * as terminal tables: per rank its communication and how much of it compute
 * hid, per matched collective its bytes, time, bandwidths and skew.  Keys:
 * docs/trace.md, "Multi-rank". */
#include <stdio.h>
#include "report_internal.h"
#include "opmodel/trace_analysis.h"

static void opt_str(strbuf *b, const char *s)
{
    if (s) sb_json_string(b, s);
    else sb_puts(b, "null");
}

static void kv_num(strbuf *b, const char *k, double v)
{
    sb_printf(b, ", \"%s\": ", k);
    sb_num(b, v);
}

char *opm_trace_ranks_to_json(const opm_trace_ranks *r, opm_error *err)
{
    strbuf b = {0};
    size_t nr = opm_trace_ranks_rank_count(r), nc = opm_trace_ranks_collective_count(r);
    sb_printf(&b, "{\"rank_count\": %zu, \"matched_collectives\": %zu,\n \"ranks\": [", nr, nc);
    for (size_t i = 0; i < nr; i++) {
        const opm_trace_rank *k = opm_trace_ranks_rank(r, i);
        sb_printf(&b, "%s\n  {\"rank\": %zu, \"trace\": ", i ? "," : "", i);
        sb_json_string(&b, k->source);
        sb_printf(&b, ", \"collectives\": %llu", (unsigned long long)k->collectives);
        kv_num(&b, "comm_s", k->comm_s);
        kv_num(&b, "exposed_comm_s", k->exposed_comm_s);
        kv_num(&b, "overlapped_comm_s", k->overlapped_comm_s);
        kv_num(&b, "compute_s", k->compute_s);
        kv_num(&b, "collective_wait_s", k->collective_wait_s);
        sb_putc(&b, '}');
    }
    sb_puts(&b, "],\n \"collectives\": [");
    for (size_t i = 0; i < nc; i++) {
        const opm_trace_collective *c = opm_trace_ranks_collective(r, i);
        sb_printf(&b, "%s\n  {\"index\": %zu, \"collective\": ", i ? "," : "", i);
        sb_json_string(&b, c->collective);
        sb_puts(&b, ", \"kernel\": ");
        sb_json_string(&b, c->kernel);
        sb_puts(&b, ", \"algorithm\": ");
        opt_str(&b, c->algorithm);
        sb_puts(&b, ", \"dtype\": ");
        opt_str(&b, c->dtype);
        sb_puts(&b, ", \"group_size\": ");
        if (c->group_size > 0) sb_printf(&b, "%lld", (long long)c->group_size);
        else sb_puts(&b, "null");
        sb_puts(&b, ", \"message_bytes\": ");
        if (c->message_bytes) sb_u64(&b, c->message_bytes);
        else sb_puts(&b, "null");
        kv_num(&b, "time_s", c->time_s);
        kv_num(&b, "max_time_s", c->max_time_s);
        kv_num(&b, "mean_time_s", c->mean_time_s);
        sb_puts(&b, ", \"algbw_bytes_per_s\": ");
        if (c->algbw_bytes_per_s > 0) sb_num(&b, c->algbw_bytes_per_s);
        else sb_puts(&b, "null");
        sb_puts(&b, ", \"busbw_bytes_per_s\": ");
        if (c->busbw_bytes_per_s > 0) sb_num(&b, c->busbw_bytes_per_s);
        else sb_puts(&b, "null");
        kv_num(&b, "skew_s", c->skew_s);
        sb_printf(&b, ", \"slowest_rank\": %zu, \"names_agree\": %s}", c->slowest_rank, c->names_agree ? "true" : "false");
    }
    sb_puts(&b, nc ? "\n ]}\n" : "]}\n");
    return opm_report_finish(&b, "ranks JSON", err);
}

char *opm_trace_ranks_to_table(const opm_trace_ranks *r, size_t top, opm_error *err)
{
    strbuf b = {0};
    size_t nr = opm_trace_ranks_rank_count(r), nc = opm_trace_ranks_collective_count(r);
    sb_printf(&b, "Ranks: %zu, collectives matched on every rank: %zu\n", nr, nc);
    sb_printf(&b, "  %4s %8s %11s %11s %13s %11s %11s  %s\n", "rank", "colls", "comm_ms", "exposed_ms", "overlapped_ms",
              "compute_ms", "wait_ms", "trace");
    for (size_t i = 0; i < nr; i++) {
        const opm_trace_rank *k = opm_trace_ranks_rank(r, i);
        sb_printf(&b, "  %4zu %8llu %11.3f %11.3f %13.3f %11.3f %11.3f  %s\n", i, (unsigned long long)k->collectives,
                  k->comm_s * 1e3, k->exposed_comm_s * 1e3, k->overlapped_comm_s * 1e3, k->compute_s * 1e3,
                  k->collective_wait_s * 1e3, k->source);
    }
    size_t shown = top && top < nc ? top : nc;
    sb_printf(&b, "\nCollectives (%zu of %zu, in order; time = shortest rank's kernel)\n", shown, nc);
    sb_printf(&b, "  %4s %-16s %-8s %-9s %5s %12s %10s %10s %10s %10s %8s\n", "#", "collective", "algo", "dtype",
              "ranks", "bytes", "time_us", "busbw_GB/s", "skew_us", "max_us", "slowest");
    for (size_t i = 0; i < shown; i++) {
        const opm_trace_collective *c = opm_trace_ranks_collective(r, i);
        sb_printf(&b, "  %4zu %-16s %-8s %-9s %5lld %12llu %10.2f %10.2f %10.2f %10.2f %8zu%s\n", i, c->collective,
                  c->algorithm ? c->algorithm : "-", c->dtype ? c->dtype : "-", (long long)c->group_size,
                  (unsigned long long)c->message_bytes, c->time_s * 1e6, c->busbw_bytes_per_s / 1e9, c->skew_s * 1e6,
                  c->max_time_s * 1e6, c->slowest_rank, c->names_agree ? "" : "  (ranks disagree)");
    }
    return opm_report_finish(&b, "ranks table", err);
}
