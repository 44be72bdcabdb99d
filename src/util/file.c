/*
 * file.c — a file copied into a new one and fsynced; fsync by name (file.h).
 */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/banned.h"

/* Writes all of buf to fd (write may take part of it): 0, or the errno. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

mn_status mn__file_copy(int from, const char *to)
{
    int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return mn__err(MN_IO, "cannot create %s: %s", to, strerror(errno));
    char buf[1 << 16];
    int err = 0;
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : 0;
            break;
        }
        if ((err = write_all(fd, buf, (size_t)n)) != 0)
            break;
    }
    if (!err && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (err) {
        unlink(to);
        return mn__err(MN_IO, "cannot copy into %s: %s", to, strerror(err));
    }
    return MN_OK;
}

mn_status mn__file_sync(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return mn__err(MN_IO, "cannot sync %s: %s", path, strerror(e));
    }
    close(fd);
    return MN_OK;
}
