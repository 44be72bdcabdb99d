/*
 * extract.h — finding memory candidates in conversation text. The offline extractor takes only
 * explicit statements a user makes about themselves or asks to be kept, sentence by sentence,
 * and nothing else (a question is never a fact):
 *   "remember that X" / "remember: X"   → fact "X"
 *   "I prefer X"                        → preference "User prefers X"
 *   "I prefer X over Y" (to, rather than) → the same, keyed by the pair "x or y" (sorted)
 *   "my K is V"                         → fact "User's K is V", key K (a later "my K is W" updates it)
 *   "I live in X" / "I moved to X"      → fact "User lives in X", key "home"
 *   "from now on X"                     → instruction "From now on X"
 * docs/memory.md ("Extraction").
 */
#ifndef MN_MEMORY_EXTRACT_H
#define MN_MEMORY_EXTRACT_H

#include <stddef.h>

#include "mnemo.h"

#define MN_EXTRACT_MAX_SENTENCE 300 /* longer sentences are not taken: too much to be one fact */
#define MN_EXTRACT_MAX_KEY 48

struct mn_candidate {
    const char *kind;           /* static: "fact", "preference", "instruction" */
    char text[MN_EXTRACT_MAX_SENTENCE + 32];
    char key[MN_EXTRACT_MAX_KEY + 1]; /* "" when the fact has no key */
};

/* Calls fn for each candidate in text (a user's message), in order; stops when fn returns
 * nonzero. */
void mn__extract_offline(const char *text, int (*fn)(void *user, const struct mn_candidate *c), void *user);

/* m is a memory of exactly this scope: namespace ns and the same user, agent and session ids, an
 * id left unset (NULL) being unset in m too, never "any": a session without memory_scope never
 * reads or changes the memories of a user. Extraction compares candidates only with those. */
int mn__extract_in_scope(const mn_memory *m, const char *ns, const char *user_id, const char *agent_id,
                        const char *session_id);

#endif
