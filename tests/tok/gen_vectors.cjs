// gen_vectors.cjs — writes the tokenizer test vectors tests/data/tok/*.jsonl: inputs and the
// token ids of cl100k_base and o200k_base from the reference, tiktoken@1.0.22 (Rust tiktoken in
// WASM), with special-token text encoded as ordinary text (encode(s, [], [])).
//
//   cd tests/tok && npm ci && node gen_vectors.cjs        (deterministic: same files every run)
//
// Files (JSON Lines; the first line is {"meta": {...}}; then one object per case:
// {"name", "text" (valid UTF-8) or "b64" (raw bytes), "cl100k_base": [ids], "o200k_base": [ids]}):
//   adversarial.jsonl   hand-made edge cases + seeded random strings over an alphabet that
//                       covers every character class the split regexes distinguish
//   real.jsonl          real text: the project's design documents, C source, and short
//                       passages in many scripts
//   invalid_utf8.jsonl  byte strings that are not UTF-8. tiktoken's API takes strings, so it
//                       cannot encode these; the ids here are DERIVED: the text is split as
//                       tiktoken splits its lossy decoding (each maximal invalid subpart one
//                       U+FFFD, as Rust's from_utf8_lossy), pieces keep their original bytes,
//                       and each piece is BPE-encoded by the reference algorithm in this file.
//                       This pipeline is checked against tiktoken on every valid case first.
'use strict';
const fs = require('fs');
const path = require('path');
const { get_encoding } = require('tiktoken');

const OUT = path.join(__dirname, '..', 'data', 'tok');
const ENCS = ['cl100k_base', 'o200k_base'];
const REF = 'tiktoken@' + JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', 'tiktoken', 'package.json'), 'utf8')).version;

// ---- reference pipeline in JS (for the invalid-UTF-8 cases) -------------------------------------
// Rust regex's \s is Unicode White_Space (JS's \s differs: it has U+FEFF and lacks U+0085).
const WS = '\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const CONTR = "'(?:[sS\\u017f]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])";
const UP = '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]', LO = '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]';
const PAT = {
    cl100k_base: new RegExp(`${CONTR}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*` +
        `|[${WS}]*[\\r\\n]+|[${WS}]+(?![^${WS}])|[${WS}]+`, 'gu'),
    o200k_base: new RegExp(`[^\\r\\n\\p{L}\\p{N}]?${UP}*${LO}+(?:${CONTR})?|[^\\r\\n\\p{L}\\p{N}]?${UP}+${LO}*(?:${CONTR})?` +
        `|\\p{N}{1,3}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*|[${WS}]*[\\r\\n]+|[${WS}]+(?![^${WS}])|[${WS}]+`, 'gu'),
};

function loadRanks(name) {
    const file = path.join(__dirname, 'node_modules', 'gpt-tokenizer', 'data', name + '.tiktoken');
    const m = new Map();
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        if (!line) continue;
        const [b64, r] = line.split(' ');
        m.set(Buffer.from(b64, 'base64').toString('latin1'), Number(r));
    }
    return m;
}

// tiktoken's byte_pair_encode: the whole piece if it is a token, else merge the lowest-ranked
// adjacent pair (leftmost on ties) until no pair is a token.
function bpe(ranks, bytes) {
    const s = Buffer.from(bytes).toString('latin1');
    if (ranks.has(s)) return [ranks.get(s)];
    let parts = [...s];
    for (;;) {
        let best = Infinity, bi = -1;
        for (let i = 0; i + 1 < parts.length; i++) {
            const r = ranks.get(parts[i] + parts[i + 1]);
            if (r !== undefined && r < best) { best = r; bi = i; }
        }
        if (bi < 0) break;
        parts.splice(bi, 2, parts[bi] + parts[bi + 1]);
    }
    return parts.map((p) => ranks.get(p));
}

// Units of a byte string as from_utf8_lossy sees them: [start, end, valid].
function utf8Units(buf) {
    const units = [];
    let i = 0;
    while (i < buf.length) {
        const b = buf[i];
        let need = 0, lo = 0x80, hi = 0xbf;
        if (b < 0x80) { units.push([i, i + 1, true]); i++; continue; }
        if (b >= 0xc2 && b <= 0xdf) need = 2;
        else if (b >= 0xe0 && b <= 0xef) { need = 3; if (b === 0xe0) lo = 0xa0; if (b === 0xed) hi = 0x9f; }
        else if (b >= 0xf0 && b <= 0xf4) { need = 4; if (b === 0xf0) lo = 0x90; if (b === 0xf4) hi = 0x8f; }
        if (!need) { units.push([i, i + 1, false]); i++; continue; }
        let k = 1;
        for (; k < need; k++) {
            const c = buf[i + k];
            if (i + k >= buf.length || c < lo || c > hi) break;
            lo = 0x80; hi = 0xbf;
        }
        units.push([i, i + k, k === need]);
        i += k;
    }
    return units;
}

function deriveIds(ranks, pat, buf) {
    // lossy string, with the byte offset of every UTF-16 index
    let str = '';
    const byteAt = [];
    for (const [a, b, ok] of utf8Units(buf)) {
        const piece = ok ? buf.subarray(a, b).toString('utf8') : '\ufffd';
        for (let j = 0; j < piece.length; j++) byteAt.push(a);
        str += piece;
    }
    byteAt.push(buf.length);
    const ids = [];
    pat.lastIndex = 0;
    let m, pos = 0;
    while ((m = pat.exec(str))) {
        if (m.index !== pos) throw new Error('pattern left a gap');
        pos = m.index + m[0].length;
        ids.push(...bpe(ranks, buf.subarray(byteAt[m.index], byteAt[pos])));
    }
    if (pos !== str.length) throw new Error('pattern did not cover the text');
    return ids;
}

// ---- cases ------------------------------------------------------------------------------------
let seed = 0x6d6e656d; // deterministic PRNG (mulberry32)
function rnd() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rnd() * a.length)];

const adversarial = [];
const add = (name, text) => adversarial.push({ name, text });

// white space
for (const n of [1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 200])
    for (const [tn, tail] of [['word', 'x'], ['Word', 'Word'], ['digit', '1'], ['punct', '!'], ['end', ''], ['nl', '\n'], ['mark', '\u0301']])
        add(`spaces ${n} then ${tn}`, 'a' + ' '.repeat(n) + tail);
for (const ws of ['\t', '\n', '\r', '\r\n', '\x0b', '\x0c', '\u00a0', '\u0085', '\u1680', '\u2000', '\u2009', '\u200a',
    '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\u200b', '\ufeff', '\u180e', '\x1c', '\x1d', '\x1e', '\x1f', '\x00'])
    for (const n of [1, 2, 3, 5])
        for (const tail of ['x', ' x', '1', '!', '', '\n', 'ſ', '\u0301'])
            add(`ws U+${ws.codePointAt(0).toString(16)} x${n} + ${JSON.stringify(tail)}`, 'a' + ws.repeat(n) + tail);
for (const s of ['\n\n\n', ' \n ', '  \n  \n  x', '\t\t\n\tfoo', '\r\n\r\n  bar', '\n \n \n', ' \t \t x', 'x \n', 'x\n ',
    '\n', ' ', '  ', '\t', '\r', ' \r\n', 'a\n\n\nb', '}\n\n\nint', ';\r\n', '!\n/', '!/\n/', '!!\n\n\n  ', ' !\n', '/\n', '//\n//',
    '   \n', '\u3000\u3000x', 'x\u3000\u3000', '\u00a0\u00a0x', ' \u00a0x', '\u00a0 x', '\t\u3000\n', '  \u0301x'])
    add(`ws mix ${JSON.stringify(s)}`, s);

// contractions
const contr = ['s', 't', 're', 've', 'm', 'll', 'd'];
const cases = (w) => {
    const out = new Set();
    for (let mask = 0; mask < 1 << w.length; mask++)
        out.add([...w].map((c, i) => (mask >> i & 1 ? c.toUpperCase() : c)).join(''));
    return [...out];
};
for (const c of contr)
    for (const v of cases(c))
        for (const pre of ['', 'it', 'IT', 'It', ' ', '1', '!', 'é', 'Я', '中', '\u0301', "'", ' x'])
            for (const post of ['', ' ', 'x', 'X', "'s", '1'])
                add(`contraction ${JSON.stringify(pre)} '${v} ${JSON.stringify(post)}`, `${pre}'${v}${post}`);
for (const s of ["'ſ", "it'ſ", "'ſx", "'K", "’s", "it’s", "'", "''", "'''s", "'s's", "don't", "DON'T", "y'all", "rock'n'roll",
    "'twas", "o'clock", "we'Ve", "WE'LL", "I'M", "she'D", "they'RE", "'ss", "'sS", "'lL", "'l", "'r", "'v", "'e",
    "x'\u017fs", "Ab'ſ", "ǅ's", "ʰ's", "中's", "\u0301's", "٣'s", "AB'S", "aB'S"])
    add(`contraction special ${JSON.stringify(s)}`, s);

// numbers
for (let n = 1; n <= 13; n++) add(`digits ${n}`, '1234567890123'.slice(0, n));
for (const s of ['1,000,000', '3.14159', '-42', '+1e10', '0x1F', '2024-01-01', '12:30:45', 'v1.2.3', '123abc', 'abc123',
    '١٢٣٤٥', '１２３４５', '²³¹', 'ⅫⅩⅠ', '½¼¾', '⑩⑪', '𝟘𝟙𝟚𝟛', '12٣4', 'x²', 'H₂O', '١a', '1\u0301', '1ſ', ' 123', '  123', '\n123'])
    add(`numbers ${JSON.stringify(s)}`, s);

// letters, case and scripts
for (const s of ['HelloWorld', 'helloWorld', 'HELLOworld', 'HTMLParser', 'iPhone', 'McDonald', 'ABC', 'ABC def', 'ABCdef GHI',
    'ǅungla', 'ǅUNGLA', 'ǈǋǲ', 'ᾈᾉ', 'ʰʲˆ', 'Aʰ', 'aʰ', 'ʰA', 'ʰa', '中A', '中a', 'A中', 'a中', 'Ab中Cd', '々', 'ー', 'カー',
    'ΑΒΓαβγ', 'Ωmega', 'ПРИВЕТмир', 'Привет мир', 'Ⴀⴀ', 'ᲐᲑ', 'ა', 'ꭰꭱ', 'ᎠᎡ', '𐐀𐐨', '𝐀𝐚', '𝐀bc', 'ß', 'ẞ', 'ǆ', 'ﬁ',
    'straße', 'İstanbul', 'ı', 'Ꙋ', '\u1c89\u1c8a', 'a\u1c89', '\u1c89a', 'Ꟍꟍ', '\ua7ce', 'x\ua7cex', '𐖗', '\u{10d50}'])
    add(`letters ${JSON.stringify(s)}`, s);

// combining marks
for (const s of ['e\u0301', 'E\u0301', 'e\u0301\u0302\u0323', '\u0301', '\u0301\u0301', ' \u0301', '!\u0301', '1\u0301',
    'A\u0301B', 'a\u0301b', 'AB\u0301', 'ab\u0301C', 'Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o', 'नमस्ते', 'हिन्दी',
    'ภาษาไทย', 'שָׁלוֹם', 'مَرْحَبًا', '\u20dd', 'a\u20dd', '\u0e31', ' \u0e31x', '\u093f', '1\u20e3', '\ufe0f', 'x\ufe0f',
    '\u0301x', '\u0301X', '\u0301 ', '\u0301\n', "\u0301's", "a\u0301's", "A\u0301'S"])
    add(`marks ${JSON.stringify(s)}`, s);

// CJK, emoji
for (const s of ['中文字符测试', '日本語のテキストです。', 'カタカナとひらがな', '한국어 텍스트', '漢字かな交じり文', '𠀀𠀁𠀂',
    '中文，标点！', '「引用」', '（括号）', '中文 English 混合', 'ｆｕｌｌｗｉｄｔｈ', '😀', '😀😀😀', '👍🏽', '👨‍👩‍👧‍👦',
    '👩🏽‍💻', '🇺🇸🇯🇵', '1️⃣', '❤️', '🏳️‍🌈', 'a😀b', ' 😀', '😀 ', 'hi👋there', '✨✨', '\u200d', 'x\u200dy', '\ufffd',
    '\ufffd\ufffd', 'a\ufffdb', ' \ufffd', '\ue000', '\uffff', '\u0378'])
    add(`cjk-emoji ${JSON.stringify(s)}`, s);

// special-token text is plain text
for (const s of ['<|endoftext|>', 'a<|endoftext|>b', '<|fim_prefix|><|fim_middle|><|fim_suffix|>', '<|endofprompt|>',
    '<|im_start|>user\nhi<|im_end|>', ' <|endoftext|> ', '<|endoftext|><|endoftext|>'])
    add(`special ${JSON.stringify(s)}`, s);

// long runs
add('long a x5000', 'a'.repeat(5000));
add('long ab x3000', 'ab'.repeat(3000));
add('long A x3000', 'A'.repeat(3000));
add('long Aa x2000', 'Aa'.repeat(2000));
add('long digits 5000', '1234567890'.repeat(500));
add('long ! x4000', '!'.repeat(4000));
add('long spaces 5000 then x', ' '.repeat(5000) + 'x');
add('long newlines 3000', '\n'.repeat(3000));
add('long tabs+spaces', ' \t'.repeat(2000));
add('long dashes', '-'.repeat(3000) + '\n' + '='.repeat(1000));
add('long 中 x2000', '中'.repeat(2000));
add('long emoji x1000', '😀'.repeat(1000));
add('long mark run', 'a' + '\u0301'.repeat(2000));
add('long zalgo', [...'zalgo'].map((c) => c + '\u0300\u0301\u0302\u0303\u0304\u0305'.repeat(30)).join(''));
{
    let w = '';
    for (let i = 0; i < 6000; i++) w += String.fromCharCode(97 + Math.floor(rnd() * 26));
    add('long random lowercase word', w);
    let b = '';
    const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    for (let i = 0; i < 4000; i++) b += b64[Math.floor(rnd() * 64)];
    add('long base64 blob', b + '==');
    let h = '';
    for (let i = 0; i < 3000; i++) h += '0123456789abcdef'[Math.floor(rnd() * 16)];
    add('long hex', h);
    let cc = '';
    for (let i = 0; i < 800; i++) cc += pick(['Get', 'Http', 'URL', 'Parser', 'X', 'ID', 'Value', 'a', 'IO']);
    add('long CamelCase', cc);
}
add('url', 'https://example.com/path/to/page?query=1&x=%20y#frag');
add('path', '/usr/share/man/man1/git-add.1.gz:42: error: expected ‘;’ before ‘}’ token');
add('json', '{"a": [1, 2, 3], "b": {"c": null, "d": "e\\u00e9"}, "f": true}');
add('c code', 'int main(int argc, char **argv) {\n\tfor (size_t i = 0; i < n; i++)\n\t\tprintf("%zu\\n", i);\n\treturn 0;\n}\n');

// random strings over an alphabet of every class the regexes tell apart
const ALPHA = [
    'a', 'b', 'e', 'l', 's', 't', 'x', 'A', 'B', 'S', 'T', 'X', 'hello', 'World', 'ABC', 'ing', ' ', ' ', ' ', '  ', '\t', '\n',
    '\r', '\r\n', '\n\n', '0', '1', '7', '42', '123', '.', ',', '!', '?', '-', '_', '/', '//', ':', ';', '"', '(', ')', '{', '}',
    '<', '>', '|', '@', '#', '$', '%', '&', '*', '+', '=', '~', '`', '\\', "'", "'s", "'S", "'t", "'re", "'RE", "'Ve",
    "'ll", "'LL", "'d", "'M", "'ſ", 'é', 'É', 'ß', 'ñ', 'ü', 'ø', 'ſ', 'ǅ', 'ǈ', 'ᾈ', 'ʰ', 'ˆ', 'ー', '々', '中', '文', 'あ',
    'カ', '한', 'ا', 'ת', 'ก', 'ॐ', '\u0301', '\u0308', '\u0323', '\u093f', '\u094d', '\u0e31', '\u05b8', '\u064e', '\u20dd',
    '\ufe0f', '\u200d', '٣', '５', '²', 'Ⅻ', '½', '⑩', '𝟘', '\u00a0', '\u3000', '\u2028', '\u2029', '\u0085', '\u1680',
    '\u2009', '\u202f', '\u205f', '\x0b', '\x0c', '\u200b', '\ufeff', '\u180e', '\x1c', '\x1f', '\x00', '😀', '👍', '🏽', '🇺',
    '🇸', '❤', '𝐀', '𝐚', '𐐀', '𐐨', '𠀀', '\ufffd', '\ue000', 'Ა', 'ꭰ', 'Ꭰ', 'Я', 'я', 'Ω', 'ω', '\u1c89', '<|endoftext|>',
];
for (let i = 0; i < 2500; i++) {
    const n = 1 + Math.floor(rnd() * 24);
    let s = '';
    for (let k = 0; k < n; k++) s += pick(ALPHA);
    add(`random ${i}`, s);
}

// real text: the project's own documents and code, and short passages in many scripts
const real = [];
{
    const root = path.join(__dirname, '..', '..');
    const shared = path.join(root, '..', 'shared');
    const files = [path.join(shared, 'DESIGN.md'), path.join(shared, 'STYLE.md'), path.join(shared, 'bench', 'README.md'),
        path.join(root, 'src', 'token', 'token.h')];
    for (const f of files) {
        if (!fs.existsSync(f)) { console.error(`gen_vectors: skipping missing ${f}`); continue; }
        const text = fs.readFileSync(f, 'utf8');
        // ~2,000-character chunks cut at line ends
        let cur = '', k = 0;
        for (const line of text.split(/(?<=\n)/)) {
            cur += line;
            if (cur.length >= 2000) { real.push({ name: `${path.relative(root, f)} #${k++}`, text: cur }); cur = ''; }
        }
        if (cur) real.push({ name: `${path.relative(root, f)} #${k++}`, text: cur });
    }
    const udhr1 = [
        ['en', 'All human beings are born free and equal in dignity and rights. They are endowed with reason and conscience and should act towards one another in a spirit of brotherhood.'],
        ['fr', 'Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués de raison et de conscience et doivent agir les uns envers les autres dans un esprit de fraternité.'],
        ['de', 'Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit Vernunft und Gewissen begabt und sollen einander im Geist der Brüderlichkeit begegnen.'],
        ['es', 'Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como están de razón y conciencia, deben comportarse fraternalmente los unos con los otros.'],
        ['ru', 'Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью и должны поступать в отношении друг друга в духе братства.'],
        ['el', 'Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης.'],
        ['zh', '人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。'],
        ['ja', 'すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心とを授けられており、互いに同胞の精神をもって行動しなければならない。'],
        ['ko', '모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 부여받았으며 서로 형제애의 정신으로 행동하여야 한다.'],
        ['ar', 'يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق. وقد وهبوا عقلاً وضميرًا وعليهم أن يعامل بعضهم بعضًا بروح الإخاء.'],
        ['he', 'כל בני אדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה עליהם לנהוג איש ברעהו ברוח של אחוה.'],
        ['hi', 'सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है। उन्हें बुद्धि और अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए।'],
        ['th', 'มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ ต่างมีเหตุผลและมโนธรรม และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ'],
        ['vi', 'Tất cả mọi người sinh ra đều được tự do và bình đẳng về nhân phẩm và quyền. Mọi con người đều được tạo hóa ban cho lý trí và lương tâm và cần phải đối xử với nhau trong tình bằng hữu.'],
        ['tr', 'Bütün insanlar hür, haysiyet ve haklar bakımından eşit doğarlar. Akıl ve vicdana sahiptirler ve birbirlerine karşı kardeşlik zihniyeti ile hareket etmelidirler.'],
        ['pl', 'Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw. Są oni obdarzeni rozumem i sumieniem i powinni postępować wobec innych w duchu braterstwa.'],
        ['uk', 'Всі люди народжуються вільними і рівними у своїй гідності та правах. Вони наділені розумом і совістю і повинні діяти у відношенні один до одного в дусі братерства.'],
        ['ka', 'ყველა ადამიანი იბადება თავისუფალი და თანასწორი თავისი ღირსებითა და უფლებებით.'],
        ['am', 'የሰው ልጅ ሁሉ ሲወለድ ነጻና በክብርና በመብትም እኩልነት ያለው ነው።'],
        ['ta', 'மனிதப் பிறவியினர் சகலரும் சுதந்திரமாகவே பிறக்கின்றனர்; அவர்கள் மதிப்பிலும், உரிமைகளிலும் சமமானவர்கள்.'],
    ];
    for (const [lang, t] of udhr1) real.push({ name: `udhr article 1 (${lang})`, text: t });
    real.push({ name: 'udhr article 1, all', text: udhr1.map(([l, t]) => `${l}: ${t}`).join('\n') + '\n' });
}

// invalid UTF-8
const invalid = [];
{
    const B = (...parts) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
    const bad = [[0x80], [0xbf], [0xc0], [0xc1], [0xc0, 0x80], [0xc2], [0xe2, 0x82], [0xe0, 0x80, 0x80], [0xe0, 0xa0],
        [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf0, 0x90, 0x80], [0xf0, 0x80, 0x80, 0x80], [0xf4, 0x90, 0x80, 0x80],
        [0xf5], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe], [0xff], [0xff, 0xfe], [0xc3, 0x28], [0xe2, 0x28, 0xa1],
        [0xf0, 0x28, 0x8c, 0xbc], [0xf0, 0x90, 0x28, 0xbc], [0xe2, 0x82, 0x28]];
    for (const b of bad)
        for (const [pre, post] of [['', ''], ['a', ''], ['', 'a'], ['hello ', ' world'], [' ', 'x'], ['x', "'s"], ['1', '23'],
            ['\n', '\n'], ['  ', ''], ['', ' x'], ['中', '文'], ['ABC', 'def'], ['\u0301', '']])
            invalid.push({ name: `invalid ${Buffer.from(b).toString('hex')} in ${JSON.stringify(pre)}..${JSON.stringify(post)}`, bytes: B(pre, b, post) });
    for (let i = 0; i < 400; i++) {
        const n = 1 + Math.floor(rnd() * 16);
        const parts = [];
        for (let k = 0; k < n; k++) parts.push(rnd() < 0.3 ? Buffer.from([Math.floor(rnd() * 256)]) : B(pick(ALPHA)));
        invalid.push({ name: `random bytes ${i}`, bytes: Buffer.concat(parts) });
    }
    const rb = Buffer.alloc(3000);
    for (let i = 0; i < rb.length; i++) rb[i] = Math.floor(rnd() * 256);
    invalid.push({ name: 'random 3000 bytes', bytes: rb });
    invalid.push({ name: 'truncated emoji at end', bytes: B('hello 😀').subarray(0, 8) });
    invalid.push({ name: 'cesu-8 surrogate pair', bytes: B('x', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80], 'y') });
    invalid.push({ name: 'latin-1 text', bytes: Buffer.from('Café naïve façade — Größe', 'latin1') });
}

// ---- run --------------------------------------------------------------------------------------
(async () => {
// Node's regex knows Unicode 17; tiktoken (and mnemo) 16.0. Characters new in 17 are classified
// differently by the JS pipeline, so cases holding them skip the pipeline cross-check.
const u16 = path.join(__dirname, 'node_modules', '@unicode', 'unicode-16.0.0', 'General_Category', 'Unassigned', 'code-points.mjs');
const unassigned16 = new Set((await import(require('url').pathToFileURL(u16).href)).default);
const hasNew17 = (t) => [...t].some((ch) => unassigned16.has(ch.codePointAt(0)) && /[\p{L}\p{N}\p{M}]/u.test(ch));
const encs = Object.fromEntries(ENCS.map((e) => [e, get_encoding(e)]));
const ranks = Object.fromEntries(ENCS.map((e) => [e, loadRanks(e)]));
const ref = (e, text) => Array.from(encs[e].encode(text, [], []));
let checked = 0;
function refCase(c) {
    const buf = Buffer.from(c.text, 'utf8');
    if (buf.toString('utf8') !== c.text) throw new Error(`case ${c.name} is not valid UTF-8 text`);
    const o = { name: c.name, text: c.text };
    for (const e of ENCS) {
        o[e] = ref(e, c.text);
        // the derived pipeline must agree with tiktoken wherever tiktoken can be asked
        const d = deriveIds(ranks[e], PAT[e], buf);
        if (d.join() !== o[e].join() && !hasNew17(c.text)) throw new Error(`derived pipeline differs from ${REF} on ${e} ${c.name}`);
        checked++;
    }
    return o;
}
function derivedCase(c) {
    const o = { name: c.name, b64: c.bytes.toString('base64') };
    // the lossy text, through tiktoken, must split the same way: compare token counts of the
    // pieces that contain no replacement (a sanity check), and record the derived ids
    for (const e of ENCS) o[e] = deriveIds(ranks[e], PAT[e], c.bytes);
    return o;
}
function write(file, kind, objs) {
    const meta = { meta: { generator: 'tests/tok/gen_vectors.cjs', reference: REF, kind, cases: objs.length } };
    const lines = [JSON.stringify(meta), ...objs.map((o) => JSON.stringify(o))];
    fs.mkdirSync(OUT, { recursive: true });
    fs.writeFileSync(path.join(OUT, file), lines.join('\n') + '\n');
    console.log(`gen_vectors: ${file}: ${objs.length} cases, ${fs.statSync(path.join(OUT, file)).size} bytes`);
}
write('adversarial.jsonl', 'reference', adversarial.map(refCase));
write('real.jsonl', 'reference', real.map(refCase));
// the lossy decodings of the invalid inputs are valid text: check those against tiktoken too
for (const c of invalid) refCase({ name: c.name + ' (lossy)', text: c.bytes.toString('utf8') });
write('invalid_utf8.jsonl', 'derived', invalid.map(derivedCase));
console.log(`gen_vectors: derived pipeline agreed with ${REF} on ${checked} encodings`);
for (const e of ENCS) encs[e].free();
})().catch((err) => { console.error(err); process.exit(1); });
