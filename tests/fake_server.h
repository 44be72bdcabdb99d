/*
 * fake_server.h — starts one of the dependency-free node fake model servers of tests/fake_llm/
 * on an ephemeral loopback port (it prints "PORT n" when ready) and stops it. Header-only: each
 * test executable that needs one includes it.
 */
#ifndef MNEMO_TESTS_FAKE_SERVER_H
#define MNEMO_TESTS_FAKE_SERVER_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct fake_server {
    pid_t pid;
    char base_url[64]; /* "" when it did not start */
};

/* Runs `node script`; fills s->base_url from its "PORT n" line. Returns 0, or -1 when no pipe. */
static inline int fake_server_start(struct fake_server *s, const char *script)
{
    int fd[2];
    s->base_url[0] = '\0';
    if (pipe(fd) != 0)
        return -1;
    s->pid = fork();
    if (s->pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execlp("node", "node", script, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    int port = 0;
    if (!f || fscanf(f, "PORT %d", &port) != 1)
        port = 0;
    if (f)
        fclose(f);
    if (port)
        snprintf(s->base_url, sizeof s->base_url, "http://127.0.0.1:%d", port);
    return 0;
}

static inline void fake_server_stop(struct fake_server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}

#endif
