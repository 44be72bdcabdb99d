/*
 * fuzz_document.c — libFuzzer target for what documents parse (src/engine/document_fields.c):
 * input is "FIELD PATH\nFILTER JSON\nVALUE JSON". Any bytes must be refused or read cleanly: a
 * field path that passes mn__document_field_ok gives at most `max` texts from any value, and a
 * filter that passes the check matches any value without failing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/document.h"

/* The next line of data[*pos..size) as a new string; NULL at the end. */
static char *next_line(const uint8_t *data, size_t size, size_t *pos)
{
    if (*pos > size)
        return NULL;
    const uint8_t *nl = memchr(data + *pos, '\n', size - *pos);
    size_t end = nl ? (size_t)(nl - data) : size;
    char *line = strndup((const char *)data + *pos, end - *pos);
    *pos = end + 1;
    return line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pos = 0;
    char *path = next_line(data, size, &pos), *filter_text = next_line(data, size, &pos);
    char *value_text = next_line(data, size, &pos);
    json_t *value = value_text ? json_loads(value_text, JSON_DECODE_ANY, NULL) : NULL;
    json_t *filter = filter_text ? json_loads(filter_text, 0, NULL) : NULL;
    if (path && value && mn__document_field_ok(path)) {
        json_t *fields = json_pack("[s]", path);
        char **texts = NULL;
        size_t n = 0;
        if (fields && mn__document_texts(value, fields, 8, &texts, &n) == MN_OK) {
            if (n > 8)
                abort(); /* the bound holds */
            for (size_t i = 0; i < n; i++)
                if (!texts[i])
                    abort();
            mn__document_texts_free(texts, n);
        }
        json_decref(fields);
    }
    if (filter && mn__document_filter_check(filter) == MN_OK && json_is_object(value))
        (void)mn__document_filter_match(filter, value);
    json_decref(filter);
    json_decref(value);
    free(path);
    free(filter_text);
    free(value_text);
    return 0;
}
