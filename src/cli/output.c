/* output.c — writing a command's output files all or none.
 *
 * A command builds each output whole in memory first.  Each regular file
 * (or one that does not exist yet) is written to a temporary file beside
 * it. The temporary files are renamed into place only once every one of
 * them is complete, so a failure leaves every target as it was.
 *
 * A path that exists and is not a regular file (/dev/null, a FIFO, a
 * terminal) is written in place and never renamed over or removed.  An
 * output that would overwrite one of the command's inputs is refused
 * before anything is written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

/* True when the folder holding path, or a folder above it, is the folder
 * `dir` (compared by device and inode, so links and "." do not hide it). */
static int under_dir(const char *path, const struct stat *dir)
{
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) + (slash == path) : 1;
    char buf[PATH_MAX];
    if (len + 1 > sizeof buf) return 0;
    if (slash) memcpy(buf, path, len);
    else buf[0] = '.';
    buf[len] = '\0';
    struct stat st, prev = {0};
    for (int depth = 0; depth < 256 && !stat(buf, &st); depth++) {
        if (st.st_dev == dir->st_dev && st.st_ino == dir->st_ino) return 1;
        if (depth && st.st_dev == prev.st_dev && st.st_ino == prev.st_ino) break; /* the root */
        prev = st;
        if (len + 4 > sizeof buf) break;
        memcpy(buf + len, "/..", 4);
        len += 3;
    }
    return 0;
}

/* True when path is an existing regular file that reading `input` (a CSV
 * file, or a folder whose *.csv files are read) would read. */
static int is_input(const char *path, const char *input)
{
    struct stat so, si;
    if (stat(path, &so) || !S_ISREG(so.st_mode) || stat(input, &si)) return 0;
    if (S_ISREG(si.st_mode)) return so.st_dev == si.st_dev && so.st_ino == si.st_ino;
    size_t len = strlen(path);
    return S_ISDIR(si.st_mode) && len >= 4 && !strcmp(path + len - 4, ".csv") && under_dir(path, &si);
}

static int write_all(int fd, const char *text, size_t n)
{
    while (n) {
        ssize_t w = write(fd, text, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
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

int cli_write_outputs(const cli_output *out, size_t n, const char *const *inputs, size_t n_in)
{
    size_t to_stdout = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(out[i].path, "-")) {
            if (++to_stdout > 1) return cli_usage("%s: only one output can go to stdout ('-')", out[i].opt);
            continue;
        }
        if (!out[i].path[0]) return cli_usage("%s: expected a file name", out[i].opt);
        for (size_t j = 0; j < i; j++)
            if (strcmp(out[j].path, "-") && !strcmp(out[j].path, out[i].path))
                return cli_usage("%s: '%s' is also the %s output", out[i].opt, out[i].path, out[j].opt);
        for (size_t j = 0; j < n_in; j++)
            if (inputs[j] && is_input(out[i].path, inputs[j]))
                return cli_usage("%s: '%s' is one of the input files (%s); not overwriting it", out[i].opt,
                                 out[i].path, inputs[j]);
    }
    char **tmp = calloc(n + 1, sizeof *tmp);
    if (!tmp) return cli_usage("out of memory");
    int rc = EXIT_OK;
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        const cli_output *o = &out[i];
        if (!strcmp(o->path, "-")) continue;
        struct stat st;
        int exists = stat(o->path, &st) == 0;
        if (exists && S_ISDIR(st.st_mode)) {
            rc = cli_usage("%s: cannot write '%s': it is a folder", o->opt, o->path);
            break;
        }
        if (exists && !S_ISREG(st.st_mode)) {
            /* A device or FIFO: written in place, never replaced. */
            int fd = open(o->path, O_WRONLY | O_TRUNC);
            int bad = fd < 0 || write_all(fd, o->text, o->n);
            int e = errno;
            if (fd >= 0 && close(fd)) bad = 1, e = errno;
            if (bad) rc = cli_usage("%s: cannot write '%s': %s", o->opt, o->path, strerror(e));
            continue;
        }
        size_t len = strlen(o->path);
        tmp[i] = malloc(len + 8);
        if (!tmp[i]) {
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
            rc = cli_usage("%s: cannot write '%s': %s", o->opt, o->path, strerror(e));
            break;
        }
        int bad = fchmod(fd, exists ? st.st_mode & 07777 : new_file_mode()) || write_all(fd, o->text, o->n);
        int e = errno;
        if (close(fd)) bad = 1, e = errno;
        if (bad) rc = cli_usage("%s: cannot write '%s': %s", o->opt, o->path, strerror(e));
    }
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        if (strcmp(out[i].path, "-")) continue;
        if ((out[i].n && fwrite(out[i].text, 1, out[i].n, stdout) != out[i].n) || fflush(stdout))
            rc = cli_usage("%s: cannot write to stdout: %s", out[i].opt, strerror(errno));
    }
    for (size_t i = 0; i < n; i++) {
        if (!tmp[i]) continue;
        if (rc == EXIT_OK && rename(tmp[i], out[i].path)) {
            int e = errno;
            rc = cli_usage("%s: cannot write '%s': %s", out[i].opt, out[i].path, strerror(e));
        }
        if (rc != EXIT_OK) unlink(tmp[i]);
        free(tmp[i]);
    }
    free(tmp);
    return rc;
}
