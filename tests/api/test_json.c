/*
 * test_json.c — the JSON texts mnemo.h hands out for messages: mn_message_to_json's exact bytes
 * (escapes, stored JSON fields, key order) and mn_messages_to_json as the array of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"

static char dir[64];

static mn_db *open_db(void)
{
    char path[160];
    snprintf(path, sizeof path, "%s/json.db", dir);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(path, cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static void message_json_bytes(void **state)
{
    (void)state;
    mn_db *db = open_db();
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    mn_message_in in[3];
    for (int i = 0; i < 3; i++)
        in[i] = (mn_message_in)MN_MESSAGE_IN_INIT;
    in[0].content = "say \"hi\"\\ now\n\t\x01 caf\xc3\xa9 \xf0\x9f\x98\x80 </script>";
    in[0].files = "[\"a.c\", \"b/c.h\"]";
    in[0].metadata = "{\"k\": [1, 2.5, null]}";
    in[0].idempotency_key = "key-1";
    in[1].role = MN_ROLE_ASSISTANT;
    in[1].tool_calls = "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]";
    in[1].model = "m-1";
    in[2].role = MN_ROLE_TOOL;
    in[2].tool_call_id = "c1";
    in[2].name = "f";
    in[2].content = "ok";
    in[2].pinned = 1;
    mn_messages *out = NULL;
    assert_int_equal(mn_append_batch(db, s->id, in, 3, 0, &out), MN_OK);
    mn_messages_free(out);
    mn_messages *h = NULL;
    assert_int_equal(mn_history(db, s->id, NULL, &h), MN_OK);
    assert_int_equal(h->count, 3);

    char *text = NULL, want[1024];
    const mn_message *m = &h->items[0];
    assert_int_equal(mn_message_to_json(m, &text), MN_OK);
    snprintf(want, sizeof want,
             "{\"id\":%lld,\"session_id\":\"%s\",\"seq\":1,\"role\":\"user\","
             "\"content\":\"say \\\"hi\\\"\\\\ now\\n\\t\\u0001 caf\xc3\xa9 \xf0\x9f\x98\x80 </script>\","
             "\"tool_calls\":null,\"tool_call_id\":null,\"name\":null,\"tool_name\":null,\"model\":null,"
             "\"files\":[\"a.c\",\"b/c.h\"],\"metadata\":{\"k\":[1,2.5,null]},\"idempotency_key\":\"key-1\","
             "\"tokens\":%lld,\"pinned\":false,\"created_at\":%lld,\"active\":true}",
             (long long)m->id, s->id, (long long)m->tokens, (long long)m->created_at);
    assert_string_equal(text, want);

    /* the array form is the objects joined, from offset, at most n */
    char *one = NULL, *two = NULL, *arr = NULL;
    assert_int_equal(mn_message_to_json(&h->items[1], &one), MN_OK);
    assert_int_equal(mn_message_to_json(&h->items[2], &two), MN_OK);
    assert_non_null(strstr(one, "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\""));
    assert_non_null(strstr(two, "\"tool_call_id\":\"c1\",\"name\":\"f\""));
    assert_non_null(strstr(two, "\"pinned\":true"));
    assert_int_equal(mn_messages_to_json(h, 1, 10, &arr), MN_OK);
    snprintf(want, sizeof want, "[%s,%s]", one, two);
    assert_string_equal(arr, want);
    mn_free(arr);
    assert_int_equal(mn_messages_to_json(h, 0, 1, &arr), MN_OK);
    snprintf(want, sizeof want, "[%s]", text);
    assert_string_equal(arr, want);
    mn_free(arr);
    assert_int_equal(mn_messages_to_json(h, 3, 5, &arr), MN_OK);
    assert_string_equal(arr, "[]");
    mn_free(arr);
    assert_int_equal(mn_messages_to_json(NULL, 0, 1, &arr), MN_MISUSE);

    mn_free(text);
    mn_free(one);
    mn_free(two);
    mn_messages_free(h);
    mn_session_free(s);
    mn_close(db);
}

int main(void)
{
    const char *tmp = getenv("MNEMO_TEST_TMP");
    snprintf(dir, sizeof dir, "%s/jsonXXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(message_json_bytes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
