/*
 * fuzz_llm_response.c — libFuzzer target for what comes back from (or goes into) a summariser:
 * the OpenAI / Ollama chat response parser (first byte picks the protocol) and the extractive
 * summariser's reader of the shaped input. Neither may crash, leak or overrun on any bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "summarize/summarize.h"
#include "token/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mn_tokenizer *tk;
    if (!tk && mn__token_open("heuristic", NULL, &tk) != MN_OK)
        return 0;
    if (size < 1)
        return 0;
    const char *protocol = data[0] & 1 ? "ollama" : "openai";
    char *text = NULL;
    int64_t p, c;
    mn__summarize_parse_response(protocol, (const char *)data + 1, size - 1, &text, &p, &c);
    free(text);
    char *s = malloc(size);
    if (!s)
        return 0;
    memcpy(s, data + 1, size - 1);
    s[size - 1] = '\0';
    char *sum = mn__summarize_extract(s, tk, (data[0] >> 1) + 8, data[0] & 2 ? "keep the api decisions" : NULL);
    free(sum);
    mn__summarize_strip_think(s);
    free(s);
    return 0;
}
