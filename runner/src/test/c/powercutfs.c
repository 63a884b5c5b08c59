/*
 * powercutfs: a test-only FUSE pass-through file system that records every operation that changes the
 * tree, so that a test can compute what a power cut after any operation may leave on disk
 * (dev.etcdmigrate.it.faults.PowerCut does that from the log), and that can fail one chosen call with an
 * errno (EIO, ENOSPC) to test I/O-error handling.
 *
 * Why C and libfuse3: the high-level API gives a working pass-through in a few hundred lines and is
 * what Debian ships (libfuse3-dev); the test compiles this file with gcc at test time, so nothing
 * native is committed or built by the product's build.
 *
 * Usage: powercutfs BACKING MOUNTPOINT LOG DATA [FAULT] -- fuse options...
 *   LOG  gets one text line per operation: "<seq> <who> <op> <fields...>", who = R (a java process:
 *        the runner) or E (anything else: etcd and its tools); inodes are the backing file system's.
 *   DATA gets the payload of every write, in order; a W line says where its bytes are.
 *   FAULT "op:path:k:errno": the kth (1-based) call of op on path made by a java process fails with errno
 *        instead of reaching the backing tree (calls counted: open/create, read, write, truncate,
 *        fallocate, mkdir, unlink, rmdir, rename, link, symlink, chmod, fsync, fsyncdir). Every such call
 *        is logged as "<seq> R call <k> <op> <path>", paths relative to the root with backup stamps as
 *        STAMP and etcd's snap/WAL names as SEQ, so a test can name any call of a run in the next one.
 *        "etcd.op:path:k:errno" (path as it is) fails the
 *        kth and every later such call of any other process (etcd and its tools; not logged, there are
 *        many): a bad sector, not a one-off error, which the kernel's retry of a failed read would hide.
 * The daemon runs single-threaded (-s): one total order of operations.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/statvfs.h>
#include <sys/file.h>

static int root_fd = -1;
static FILE *log_file;
static int data_fd = -1;
static unsigned long long data_off;
static unsigned long long seq;
static long fault_nth = 0;
static int fault_errno = 0;
static char fault_op[32];
static char fault_path[PATH_MAX];
static long java_calls = 0;
static long etcd_calls = 0;

/* relative path under the backing root */
static const char *rel(const char *path) {
    while (*path == '/') path++;
    return *path ? path : ".";
}

/* names are written percent-escaped: no spaces or newlines reach the log */
static void put_name(const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/')
            fputc(c, log_file);
        else
            fprintf(log_file, "%%%02X", c);
    }
}

static char who(void) {
    struct fuse_context *ctx = fuse_get_context();
    char link[64], exe[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%d/exe", (int) ctx->pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0) return 'E';
    exe[n] = 0;
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    return strncmp(base, "java", 4) == 0 ? 'R' : 'E';
}

/*
 * A path as the fault spec names it: backup names' UTC stamps (yyyymmddThhmmssZ) become "STAMP", and etcd's
 * <16 hex>-<16 hex>.snap/.wal names "SEQ" (their indexes differ from run to run by a few entries), so that a
 * spec taken from one run names the same call in the next (the kth call of op on any such file).
 */
static int hex16(const char *p) {
    for (int i = 0; i < 16; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static void normalize(const char *path, char *out, size_t size) {
    size_t o = 0;
    const char *start = rel(path);
    for (const char *p = start; *p && o + 6 < size;) {
        int stamp = 1;
        for (int i = 0; i < 16 && stamp; i++) {
            char c = p[i];
            stamp = i == 8 ? c == 'T' : i == 15 ? c == 'Z' : (c >= '0' && c <= '9');
        }
        int etcd_name = (p == start || p[-1] == '/') && hex16(p) && p[16] == '-' && hex16(p + 17)
                && (strncmp(p + 33, ".snap", 5) == 0 || strncmp(p + 33, ".wal", 4) == 0);
        if (stamp) {
            memcpy(out + o, "STAMP", 5);
            o += 5;
            p += 16;
        } else if (etcd_name) {
            memcpy(out + o, "SEQ", 3);
            o += 3;
            p += 33;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = 0;
}

/* per (op, normalized path): how many calls a java process made so far */
struct seen { char key[PATH_MAX + 16]; long count; struct seen *next; };
static struct seen *seen_calls;

/*
 * Counts a fallible call of a java caller (the runner) and logs it as "call <k> <op> <path>": the kth
 * such call of op on that (normalized) path; returns the errno to fail it with when it is the one the
 * fault names ("op:path:k:errno"), or 0.
 */
static int fault(const char *op, const char *path) {
    char norm[PATH_MAX], key[PATH_MAX + 16];
    if (who() != 'R') {
        /* etcd's calls are counted only when the fault names one ("etcd.read:..."): there are many */
        if (!fault_errno || strncmp(fault_op, "etcd.", 5) != 0 || strcmp(fault_op + 5, op) != 0) return 0;
        /* etcd's file by its own name (not normalized: "SEQ" would stand for every segment) */
        /* sticky, a bad sector: the kernel retries a failed read once, which would hide a one-off error */
        if (strcmp(rel(path), fault_path) != 0 || ++etcd_calls < fault_nth) return 0;
        fprintf(log_file, "%llu E fault %s %d\n", ++seq, op, fault_errno);
        return fault_errno;
    }
    normalize(path, norm, sizeof norm);
    snprintf(key, sizeof key, "%s %s", op, norm);
    struct seen *s = seen_calls;
    while (s && strcmp(s->key, key) != 0) s = s->next;
    if (!s) {
        s = calloc(1, sizeof *s);
        snprintf(s->key, sizeof s->key, "%s", key);
        s->next = seen_calls;
        seen_calls = s;
    }
    s->count++;
    java_calls++;
    fprintf(log_file, "%llu R call %ld %s ", ++seq, s->count, op);
    put_name(norm);
    fputc('\n', log_file);
    if (fault_errno && s->count == fault_nth && strcmp(op, fault_op) == 0 && strcmp(norm, fault_path) == 0) {
        fprintf(log_file, "%llu R fault %s %d\n", ++seq, op, fault_errno);
        return fault_errno;
    }
    return 0;
}

static unsigned long long ino_of(const char *path) {
    struct stat st;
    if (fstatat(root_fd, rel(path), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
    return (unsigned long long) st.st_ino;
}

static unsigned long long ino_of_fd(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return 0;
    return (unsigned long long) st.st_ino;
}

/* parent inode and last name of a path */
static unsigned long long parent_of(const char *path, const char **name) {
    char buf[PATH_MAX];
    const char *r = rel(path);
    const char *slash = strrchr(r, '/');
    if (!slash) {
        *name = r;
        return ino_of("/");
    }
    *name = slash + 1;
    size_t len = (size_t) (slash - r);
    memcpy(buf, r, len);
    buf[len] = 0;
    return ino_of(buf);
}

static void line_start(const char *op) {
    fprintf(log_file, "%llu %c %s", ++seq, who(), op);
}

static void log_entry(const char *op, unsigned long long ino, const char *path, unsigned int mode) {
    const char *name;
    unsigned long long parent = parent_of(path, &name);
    line_start(op);
    fprintf(log_file, " %llu %llu ", ino, parent);
    put_name(name);
    fprintf(log_file, " %o\n", mode & 07777);
}

static void *pc_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    (void) conn;
    cfg->use_ino = 1;
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->direct_io = 0;
    /* the root's inode, so that a reader can tie entries of the root to it */
    fprintf(log_file, "0 E root %llu\n", ino_of("/"));
    return NULL;
}

static void pc_destroy(void *data) {
    (void) data;
    fflush(log_file);
    fsync(fileno(log_file));
}

static int pc_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    int r = fi ? fstat((int) fi->fh, st) : fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
    return r == 0 ? 0 : -errno;
}

static int pc_readlink(const char *path, char *buf, size_t size) {
    ssize_t n = readlinkat(root_fd, rel(path), buf, size - 1);
    if (n < 0) return -errno;
    buf[n] = 0;
    return 0;
}

static int pc_opendir(const char *path, struct fuse_file_info *fi) {
    int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return -e;
    }
    fi->fh = (uint64_t) (uintptr_t) d;
    return 0;
}

static int pc_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
    (void) path; (void) off; (void) flags;
    DIR *d = (DIR *) (uintptr_t) fi->fh;
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_ino = e->d_ino;
        st.st_mode = (mode_t) (e->d_type << 12);
        if (filler(buf, e->d_name, &st, 0, 0)) break;
    }
    return 0;
}

static int pc_releasedir(const char *path, struct fuse_file_info *fi) {
    (void) path;
    closedir((DIR *) (uintptr_t) fi->fh);
    return 0;
}

static int pc_mkdir(const char *path, mode_t mode) {
    int e = fault("mkdir", path);
    if (e) return -e;
    if (mkdirat(root_fd, rel(path), mode) != 0) return -errno;
    struct stat st;
    fstatat(root_fd, rel(path), &st, AT_SYMLINK_NOFOLLOW);
    log_entry("mkdir", ino_of(path), path, st.st_mode);
    return 0;
}

static int pc_unlink(const char *path) {
    int e = fault("unlink", path);
    if (e) return -e;
    unsigned long long ino = ino_of(path);
    if (unlinkat(root_fd, rel(path), 0) != 0) return -errno;
    log_entry("unlink", ino, path, 0);
    return 0;
}

static int pc_rmdir(const char *path) {
    int e = fault("rmdir", path);
    if (e) return -e;
    unsigned long long ino = ino_of(path);
    if (unlinkat(root_fd, rel(path), AT_REMOVEDIR) != 0) return -errno;
    log_entry("rmdir", ino, path, 0);
    return 0;
}

static int pc_symlink(const char *target, const char *path) {
    int e = fault("symlink", path);
    if (e) return -e;
    if (symlinkat(target, root_fd, rel(path)) != 0) return -errno;
    log_entry("symlink", ino_of(path), path, 0777);
    /* the target as a payload */
    fprintf(log_file, "%llu %c W %llu 0 %zu %llu\n", ++seq, who(), ino_of(path), strlen(target), data_off);
    ssize_t w = write(data_fd, target, strlen(target));
    if (w > 0) data_off += (unsigned long long) w;
    return 0;
}

static int pc_rename(const char *from, const char *to, unsigned int flags) {
    int e = fault("rename", from);
    if (e) return -e;
    if (flags & RENAME_EXCHANGE) return -EINVAL; /* not modelled; nothing here uses it */
    unsigned long long ino = ino_of(from);
    const char *fname, *tname;
    unsigned long long fparent = parent_of(from, &fname);
    unsigned long long tparent = parent_of(to, &tname);
    if (renameat2(root_fd, rel(from), root_fd, rel(to), flags) != 0) return -errno;
    line_start("rename");
    fprintf(log_file, " %llu %llu ", ino, fparent);
    put_name(fname);
    fprintf(log_file, " %llu ", tparent);
    put_name(tname);
    fputc('\n', log_file);
    return 0;
}

static int pc_link(const char *from, const char *to) {
    int e = fault("link", to);
    if (e) return -e;
    if (linkat(root_fd, rel(from), root_fd, rel(to), 0) != 0) return -errno;
    log_entry("link", ino_of(to), to, 0);
    return 0;
}

static int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    int e = fault("chmod", path);
    if (e) return -e;
    int r = fi ? fchmod((int) fi->fh, mode) : fchmodat(root_fd, rel(path), mode, 0);
    if (r != 0) return -errno;
    line_start("chmod");
    fprintf(log_file, " %llu %o\n", fi ? ino_of_fd((int) fi->fh) : ino_of(path), mode & 07777);
    return 0;
}

static int pc_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    int r = fi ? fchown((int) fi->fh, uid, gid) : fchownat(root_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW);
    return r == 0 ? 0 : -errno;
}

static int pc_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    int e = fault("truncate", path);
    if (e) return -e;
    int r;
    unsigned long long ino;
    if (fi) {
        r = ftruncate((int) fi->fh, size);
        ino = ino_of_fd((int) fi->fh);
    } else {
        int fd = openat(root_fd, rel(path), O_WRONLY);
        if (fd < 0) return -errno;
        r = ftruncate(fd, size);
        ino = ino_of_fd(fd);
        close(fd);
    }
    if (r != 0) return -errno;
    line_start("T");
    fprintf(log_file, " %llu %lld\n", ino, (long long) size);
    return 0;
}

static int pc_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
    int r = fi ? futimens((int) fi->fh, tv) : utimensat(root_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW);
    return r == 0 ? 0 : -errno;
}

/* O_SYNC/O_DSYNC handles: every write is followed by a logged sync of its file */
#define SYNC_FLAG (1ULL << 62)

static int open_common(const char *path, struct fuse_file_info *fi, int create, mode_t mode) {
    int e = fault(create ? "create" : "open", path);
    if (e) return -e;
    int existed = create && ino_of(path) != 0;
    int flags = fi->flags & ~(O_NOFOLLOW);
    int fd = create ? openat(root_fd, rel(path), flags | O_CREAT, mode) : openat(root_fd, rel(path), flags);
    if (fd < 0) return -errno;
    fi->fh = (uint64_t) fd;
    if (create && !existed) {
        struct stat st;
        fstat(fd, &st);
        log_entry("create", (unsigned long long) st.st_ino, path, st.st_mode);
    }
    if ((fi->flags & O_TRUNC) && (fi->flags & O_ACCMODE) != O_RDONLY) {
        line_start("T");
        fprintf(log_file, " %llu 0\n", ino_of_fd(fd));
    }
    if (fi->flags & (O_SYNC | O_DSYNC)) fi->fh |= SYNC_FLAG;
    return 0;
}

#define FD(fi) ((int) ((fi)->fh & ~SYNC_FLAG))

static int pc_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    return open_common(path, fi, 1, mode);
}

static int pc_open(const char *path, struct fuse_file_info *fi) {
    return open_common(path, fi, 0, 0);
}

static int pc_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    int e = fault("read", path);
    if (e) return -e;
    ssize_t n = pread(FD(fi), buf, size, off);
    return n < 0 ? -errno : (int) n;
}

static int pc_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    int e = fault("write", path);
    if (e) return -e;
    ssize_t n = pwrite(FD(fi), buf, size, off);
    if (n < 0) return -errno;
    unsigned long long ino = ino_of_fd(FD(fi));
    ssize_t z = 0;
    while (z < n && buf[z] == 0) z++;
    line_start("W");
    if (z == n) {
        /* zeros (copies of preallocated WAL segments): no payload */
        fprintf(log_file, " %llu %lld %zd -1\n", ino, (long long) off, n);
    } else {
        fprintf(log_file, " %llu %lld %zd %llu\n", ino, (long long) off, n, data_off);
        ssize_t done = 0;
        while (done < n) {
            ssize_t w = write(data_fd, buf + done, (size_t) (n - done));
            if (w <= 0) { perror("powercutfs: data log"); abort(); }
            done += w;
        }
        data_off += (unsigned long long) n;
    }
    if (fi->fh & SYNC_FLAG) {
        fdatasync(FD(fi));
        line_start("fsync");
        fprintf(log_file, " %llu 1\n", ino);
    }
    return (int) n;
}

static int pc_statfs(const char *path, struct statvfs *st) {
    (void) path;
    return fstatvfs(root_fd, st) == 0 ? 0 : -errno;
}

static int pc_flush(const char *path, struct fuse_file_info *fi) {
    (void) path;
    int fd = dup(FD(fi)); /* close(dup) releases POSIX locks as close would */
    return fd < 0 ? -errno : (close(fd) == 0 ? 0 : -errno);
}

static int pc_release(const char *path, struct fuse_file_info *fi) {
    (void) path;
    close(FD(fi));
    return 0;
}

static int pc_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    int e = fault("fsync", path);
    if (e) return -e;
    int r = datasync ? fdatasync(FD(fi)) : fsync(FD(fi));
    if (r != 0) return -errno;
    line_start("fsync");
    fprintf(log_file, " %llu %d\n", ino_of_fd(FD(fi)), datasync);
    fflush(log_file);
    return 0;
}

static int pc_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    int e = fault("fsyncdir", path);
    if (e) return -e;
    DIR *d = (DIR *) (uintptr_t) fi->fh;
    if (fsync(dirfd(d)) != 0) return -errno;
    line_start("fsyncdir");
    fprintf(log_file, " %llu %d\n", ino_of(path), datasync);
    fflush(log_file);
    return 0;
}

static int pc_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi) {
    int e = fault("fallocate", path);
    if (e) return -e;
    if (fallocate(FD(fi), mode, off, len) != 0) return -errno;
    line_start("F");
    fprintf(log_file, " %llu %d %lld %lld\n", ino_of_fd(FD(fi)), mode, (long long) off, (long long) len);
    return 0;
}

static off_t pc_lseek(const char *path, off_t off, int whence, struct fuse_file_info *fi) {
    (void) path;
    off_t r = lseek(FD(fi), off, whence);
    return r < 0 ? -errno : r;
}

static const struct fuse_operations ops = {
    .init = pc_init,
    .destroy = pc_destroy,
    .getattr = pc_getattr,
    .readlink = pc_readlink,
    .opendir = pc_opendir,
    .readdir = pc_readdir,
    .releasedir = pc_releasedir,
    .mkdir = pc_mkdir,
    .unlink = pc_unlink,
    .rmdir = pc_rmdir,
    .symlink = pc_symlink,
    .rename = pc_rename,
    .link = pc_link,
    .chmod = pc_chmod,
    .chown = pc_chown,
    .truncate = pc_truncate,
    .utimens = pc_utimens,
    .create = pc_create,
    .open = pc_open,
    .read = pc_read,
    .write = pc_write,
    .statfs = pc_statfs,
    .flush = pc_flush,
    .release = pc_release,
    .fsync = pc_fsync,
    .fsyncdir = pc_fsyncdir,
    .fallocate = pc_fallocate,
    .lseek = pc_lseek,
};

int main(int argc, char *argv[]) {
    if (argc < 6 || strcmp(argv[argc > 6 && strcmp(argv[5], "--") != 0 ? 6 : 5], "--") != 0) {
        fprintf(stderr, "usage: powercutfs BACKING MOUNTPOINT LOG DATA [nth:errno] -- fuse-options...\n");
        return 2;
    }
    int dash = strcmp(argv[5], "--") == 0 ? 5 : 6;
    if (dash == 6) {
        /* op:path:k:errno, the path may hold ':' */
        char *spec = strdup(argv[5]);
        char *first = strchr(spec, ':');
        char *last = strrchr(spec, ':');
        char *mid = NULL;
        if (first && last && last > first) {
            *last = 0;
            mid = strrchr(spec, ':');
        }
        if (!first || !mid || mid == first || sscanf(mid + 1, "%ld", &fault_nth) != 1 || sscanf(last + 1, "%d", &fault_errno) != 1) {
            fprintf(stderr, "powercutfs: bad fault %s (want op:path:k:errno)\n", argv[5]);
            return 2;
        }
        *first = 0;
        *mid = 0;
        snprintf(fault_op, sizeof fault_op, "%s", spec);
        snprintf(fault_path, sizeof fault_path, "%s", first + 1);
    }
    root_fd = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (root_fd < 0) { perror(argv[1]); return 1; }
    log_file = fopen(argv[3], "w");
    if (!log_file) { perror(argv[3]); return 1; }
    setvbuf(log_file, NULL, _IOLBF, 1 << 16); /* a line is on disk when its call returns: tests mark cut points by counting lines */
    data_fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (data_fd < 0) { perror(argv[4]); return 1; }
    umask(0);
    /* fuse_main's argv: program, mount point, the options after "--", single-threaded, foreground */
    char *fargv[64];
    int fargc = 0;
    fargv[fargc++] = argv[0];
    fargv[fargc++] = argv[2];
    fargv[fargc++] = "-s";
    fargv[fargc++] = "-f";
    for (int i = dash + 1; i < argc && fargc < 63; i++) fargv[fargc++] = argv[i];
    fargv[fargc] = NULL;
    return fuse_main(fargc, fargv, &ops, NULL);
}
