/* output.c — writing a command's output files all or none.
 *
 * A command builds each output whole in memory first.  A regular file (or a
 * name that does not exist yet) is written to a temporary file beside it.
 * The temporaries are renamed into place last, once every output is
 * complete.  Anything else is written in place, after the temporaries and
 * never renamed over or removed: a device, a FIFO, or a symbolic link, so
 * the link's target gets the text and `/dev/stdout` stays a link.  So is a
 * writable file in a folder where no temporary can be made.
 *
 * Before anything is written, these are refused:
 * - an output that would overwrite one of the command's input files (the
 *   files themselves, compared by device and inode, so a link in the data
 *   folder does not hide one; a data folder's *.csv and *.jsonl files);
 * - two outputs naming one file;
 * - a file that exists but is not writable.
 *
 * A rename that fails after an earlier one succeeded (a sticky folder)
 * leaves that earlier output replaced: the one step that is not all or
 * none. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "validate/csv.h"

/* What an output name refers to: the file itself when it exists (links
 * followed), else its folder and its last component.  "-" is stdout. */
typedef struct target {
    int exists;
    dev_t dev;
    ino_t ino;
    const char *base;            /* last component, for a name that does not exist */
} target;

static void target_of(const char *path, target *t)
{
    struct stat st;
    memset(t, 0, sizeof *t);
    if (!strcmp(path, "-") ? fstat(STDOUT_FILENO, &st) == 0 : stat(path, &st) == 0) {
        t->exists = 1;
        t->dev = st.st_dev;
        t->ino = st.st_ino;
        return;
    }
    const char *slash = strrchr(path, '/');
    t->base = slash ? slash + 1 : path;
    size_t len = slash ? (size_t)(slash - path) + (slash == path) : 1;
    char *dir = malloc(len + 1);
    if (!dir) return;
    if (slash) memcpy(dir, path, len);
    else dir[0] = '.';
    dir[len] = '\0';
    if (stat(dir, &st) == 0) {
        t->dev = st.st_dev;
        t->ino = st.st_ino;
    }
    free(dir);
}

static int same_target(const target *a, const target *b)
{
    if (a->exists != b->exists || a->dev != b->dev || a->ino != b->ino) return 0;
    return a->exists || (a->ino && !strcmp(a->base, b->base));
}

/* True when path names one of the files reading `input` (a file, or a
 * folder whose *.csv files, or for `validate` *.jsonl files, are read)
 * reads.  Both kinds are checked for every command: an output over a data
 * file of the other kind is a mistake too. */
static int is_input(const target *out, const char *input)
{
    struct stat si;
    if (!out->exists || stat(input, &si)) return 0;
    if (!S_ISDIR(si.st_mode)) return si.st_dev == out->dev && si.st_ino == out->ino;
    static const char *const exts[] = {".csv", ".jsonl"};
    int hit = 0;
    for (size_t e = 0; e < sizeof exts / sizeof *exts && !hit; e++) {
        char **paths = NULL;
        size_t n = 0, cap = 0;
        opm_error err;
        if (opm_list_dir_ext(input, exts[e], "", &paths, &n, &cap, &err) == 0)
            for (size_t i = 0; i < n && !hit; i++) {
                struct stat sf;
                hit = stat(paths[i], &sf) == 0 && sf.st_dev == out->dev && sf.st_ino == out->ino;
            }
        for (size_t i = 0; i < n; i++) free(paths[i]);
        free(paths);
    }
    return hit;
}

static int write_all(int fd, const char *text, size_t n)
{
    while (n) {
        ssize_t w = write(fd, text, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return -1;
        }
        text += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The mode a new file gets from open(…, 0666): 0666 less the umask. */
static mode_t new_file_mode(void)
{
    mode_t m = umask(0);
    umask(m);
    return 0666 & ~m;
}

static int write_in_place(const cli_output *o)
{
    int fd = open(o->path, O_WRONLY | O_TRUNC | O_CREAT, 0666);
    int bad = fd < 0 || write_all(fd, o->text, o->n);
    int e = errno;
    if (fd >= 0 && close(fd) && !bad) bad = 1, e = errno;
    return bad ? cli_usage("%s: cannot write '%s': %s", o->opt, o->path, strerror(e)) : EXIT_OK;
}

int cli_is_stdout(const char *path)
{
    if (!strcmp(path, "-")) return 1;
    target a, b;
    target_of(path, &a);
    target_of("-", &b);
    return a.exists && same_target(&a, &b);
}

enum { VIA_STDOUT, VIA_TEMP, VIA_IN_PLACE };

int cli_write_outputs(const cli_output *out, size_t n, const char *const *inputs, size_t n_in)
{
    target *tg = calloc(n + 1, sizeof *tg);
    int *via = calloc(n + 1, sizeof *via);
    char **tmp = calloc(n + 1, sizeof *tmp);
    int rc = tg && via && tmp ? EXIT_OK : cli_usage("out of memory");
    /* Checks first: nothing is written when one fails. */
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        const cli_output *o = &out[i];
        if (!o->path[0]) {
            rc = cli_usage("%s: expected a file name", o->opt);
            break;
        }
        target_of(o->path, &tg[i]);
        for (size_t j = 0; j < i && rc == EXIT_OK; j++)
            if (same_target(&tg[i], &tg[j]))
                rc = !strcmp(o->path, "-") || !strcmp(out[j].path, "-")
                         ? cli_usage("%s: only one output can go to stdout ('%s' and the %s output '%s')", o->opt,
                                     o->path, out[j].opt, out[j].path)
                         : cli_usage("%s: '%s' is also the %s output ('%s')", o->opt, o->path, out[j].opt,
                                     out[j].path);
        for (size_t j = 0; j < n_in && rc == EXIT_OK; j++)
            if (inputs[j] && is_input(&tg[i], inputs[j]))
                rc = cli_usage("%s: '%s' is one of the input files (%s); not overwriting it", o->opt, o->path,
                               inputs[j]);
        if (rc != EXIT_OK) break;
        struct stat ls;
        if (!strcmp(o->path, "-")) {
            via[i] = VIA_STDOUT;
        } else if (lstat(o->path, &ls) != 0) {
            via[i] = VIA_TEMP;
        } else if (S_ISDIR(ls.st_mode)) {
            rc = cli_usage("%s: cannot write '%s': it is a folder", o->opt, o->path);
        } else if (access(o->path, W_OK) != 0) {
            rc = cli_usage("%s: cannot write '%s': %s", o->opt, o->path, strerror(errno));
        } else {
            via[i] = S_ISREG(ls.st_mode) ? VIA_TEMP : VIA_IN_PLACE;
        }
    }
    /* The temporaries. */
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        const cli_output *o = &out[i];
        if (via[i] != VIA_TEMP) continue;
        size_t len = strlen(o->path);
        if (!(tmp[i] = malloc(len + 8))) {
            rc = cli_usage("out of memory");
            break;
        }
        memcpy(tmp[i], o->path, len);
        memcpy(tmp[i] + len, ".XXXXXX", 8);
        int fd = mkstemp(tmp[i]);
        if (fd < 0) {
            int e = errno;
            free(tmp[i]);
            tmp[i] = NULL;
            struct stat st;
            /* A writable file in a folder that takes no new file. */
            if ((e == EACCES || e == EROFS || e == EPERM) && stat(o->path, &st) == 0 && S_ISREG(st.st_mode)) {
                via[i] = VIA_IN_PLACE;
                continue;
            }
            rc = cli_usage("%s: cannot write '%s': %s", o->opt, o->path, strerror(e));
            break;
        }
        struct stat st;
        int exists = stat(o->path, &st) == 0;
        int bad = fchmod(fd, exists ? st.st_mode & 07777 : new_file_mode()) || write_all(fd, o->text, o->n);
        int e = errno;
        if (close(fd) && !bad) bad = 1, e = errno;
        if (bad) rc = cli_usage("%s: cannot write '%s': %s", o->opt, o->path, strerror(e));
    }
    /* In place and stdout, once every temporary is complete. */
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        if (via[i] == VIA_IN_PLACE) rc = write_in_place(&out[i]);
        else if (via[i] == VIA_STDOUT &&
                 ((out[i].n && fwrite(out[i].text, 1, out[i].n, stdout) != out[i].n) || fflush(stdout)))
            rc = cli_usage("%s: cannot write to stdout: %s", out[i].opt, strerror(errno));
    }
    for (size_t i = 0; i < n && tmp; i++) {
        if (!tmp[i]) continue;
        if (rc == EXIT_OK && rename(tmp[i], out[i].path)) {
            int e = errno;
            rc = cli_usage("%s: cannot write '%s': %s", out[i].opt, out[i].path, strerror(e));
        }
        if (rc != EXIT_OK) unlink(tmp[i]);
        free(tmp[i]);
    }
    free(tg);
    free(via);
    free(tmp);
    return rc;
}
