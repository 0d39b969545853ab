/* detect.c — from the GPU name a trace records in deviceProperties (what
 * torch.cuda.get_device_name() returns) to a built-in hardware entry.
 *
 * Names vary by driver and packaging ("NVIDIA A100-SXM4-80GB", "NVIDIA A100
 * 80GB PCIe", "AMD Instinct MI300X VF"), so a rule is a set of words that
 * must all appear, matched case-insensitively with '-', '_' and '/' read as
 * spaces.  A word matches at the start of a word of the name; one marked
 * whole must also end there, which keeps "A10" from matching "A100" and "L4"
 * from matching "L40S".  Rules are tried in order, most specific first, and
 * a variant we have no entry for maps to NULL on purpose (an H100 NVL is not
 * an H100 SXM: a wrong roof is worse than none). */
#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include "trace_internal.h"

#define MAX_WORDS 3
#define NAME_CAP 128

typedef struct detect_rule {
    /* Lower-case words; a trailing '$' asks for a whole-word match. */
    const char *words[MAX_WORDS];
    const char *entry;          /* built-in name, NULL: known but not built in */
} detect_rule;

static const detect_rule rules[] = {
    /* NVIDIA Hopper / Blackwell */
    {{"h100", "nvl"}, NULL},
    {{"h100", "pcie"}, "h100_pcie"},
    {{"h100", "sxm"}, "h100_sxm"},
    {{"h100", "80gb$", "hbm3"}, "h100_sxm"},      /* torch's name for the SXM part */
    {{"gh200"}, NULL},
    {{"h200", "nvl"}, NULL},
    {{"h200$"}, "h200_sxm"},
    {{"b200$"}, "b200"},
    /* NVIDIA Ampere */
    {{"a100", "80gb$", "pcie"}, "a100_80gb_pcie"},
    {{"a100", "pcie"}, "a100_40gb_pcie"},         /* the PCIe card without a size is the 40 GB one */
    {{"a100", "sxm", "80gb$"}, "a100_80gb_sxm"},
    {{"a10$"}, "a10"},
    /* NVIDIA Ada / Turing / Volta / Pascal */
    {{"l40s$"}, "l40s"},
    {{"l4$"}, "l4"},
    {{"t4$"}, "t4"},
    {{"v100$", "sxm2"}, "v100_sxm2"},             /* 16 and 32 GB differ only in capacity */
    {{"v100$", "pcie"}, "v100_pcie_32gb"},
    {{"p100$", "pcie", "16gb$"}, "p100_pcie_16gb"},
    {{"p4$"}, "p4"},
    /* AMD Instinct ("MI300X VF" is the SR-IOV virtual function of the same GPU) */
    {{"mi300x$"}, "mi300x"},
    {{"mi325x$"}, "mi325x"},
    {{"mi350x$"}, "mi350x"},
    {{"mi355x$"}, "mi355x"},
    /* ROCm names both MI250 parts "MI250X/MI250"; the entry describes the
     * MI250X module, of which torch sees each die as one device. */
    {{"mi250x$"}, "mi250x"},
};

/* Lower case, separators as spaces; 0 when the name does not fit. */
static int normalise(const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    if (n + 1 > cap)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        out[i] = (c == '-' || c == '_' || c == '/') ? ' ' : (char)tolower(c);
    }
    out[n] = '\0';
    return 1;
}

static int has_word(const char *hay, const char *word)
{
    size_t len = strlen(word);
    int whole = len > 0 && word[len - 1] == '$';
    if (whole)
        len--;
    for (const char *p = hay; *p; p++) {
        if (p != hay && isalnum((unsigned char)p[-1]))
            continue;
        if (strncmp(p, word, len) != 0)
            continue;
        if (!whole || !isalnum((unsigned char)p[len]))
            return 1;
    }
    return 0;
}

static int rule_matches(const detect_rule *r, const char *name)
{
    for (size_t i = 0; i < MAX_WORDS && r->words[i]; i++)
        if (!has_word(name, r->words[i]))
            return 0;
    return 1;
}

const char *opm_hardware_detect(const char *device_name)
{
    char name[NAME_CAP];
    if (!device_name || !normalise(device_name, name, sizeof name))
        return NULL;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rule_matches(&rules[i], name))
            return rules[i].entry;
    return NULL;
}
