/*
 * role.c — message role names (mnemo.h mn_role_name / mn_role_parse). They live in util because
 * every layer, the store included, reads and writes them.
 */
#include <string.h>

#include "mnemo.h"
#include "util/err.h"
#include "util/banned.h"

static const char *const role_names[] = {"system", "user", "assistant", "tool"};

const char *mn_role_name(mn_role role)
{
    if ((unsigned)role >= sizeof role_names / sizeof role_names[0])
        return NULL;
    return role_names[role];
}

mn_status mn_role_parse(const char *name, mn_role *out)
{
    mn__err_clear();
    for (unsigned i = 0; name && i < sizeof role_names / sizeof role_names[0]; i++)
        if (strcmp(name, role_names[i]) == 0) {
            *out = (mn_role)i;
            return MN_OK;
        }
    if (name && strcmp(name, "agent") == 0) { /* seed 003's name for the assistant */
        *out = MN_ROLE_ASSISTANT;
        return MN_OK;
    }
    return mn__err(MN_INVALID, "role: '%s' is not one of system, user, assistant (or agent), tool",
                   name ? name : "(null)");
}
