// Writes a minimal valid llama-architecture GGUF (v3): a 1-layer model with
// random F32 weights and a tiny SentencePiece vocabulary (control tokens, the
// 256 byte-fallback tokens llama.cpp needs, and a few words). It generates
// nonsense, but it loads and streams, which is what the test proves. The
// output rows of every non-word token are zero so sampling picks words.
import { writeFileSync } from 'node:fs';

const WORDS = ['▁hello', '▁world', '▁local', '▁model', '▁knowledge', '▁answer', '▁tiny', '▁test', '▁stream', '▁token', 'ing', 's', '.'];

const enum T {
  U32 = 4,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  I32 = 5,
}

class Writer {
  private chunks: Buffer[] = [];
  length = 0;
  private put(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.put(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.put(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.put(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.put(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.put(b);
  }
  bytes(b: Buffer): void {
    this.put(b);
  }
  pad(alignment: number): void {
    const n = (alignment - (this.length % alignment)) % alignment;
    if (n) this.put(Buffer.alloc(n));
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

type Kv = [string, T.U32 | T.F32 | T.BOOL | T.STRING, number | string | boolean] | [string, T.ARRAY, T.STRING | T.F32 | T.I32, (string | number)[]];

/** Writes the file and returns its vocabulary size. */
export function writeTinyLlamaGguf(path: string, seed = 1): number {
  const tokens = ['<unk>', '<s>', '</s>', ...Array.from({ length: 256 }, (_, i) => `<0x${i.toString(16).toUpperCase().padStart(2, '0')}>`), ...WORDS];
  const types = tokens.map((_, i) => (i === 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1));
  const scores = tokens.map((_, i) => (i < 259 ? 0 : -i));
  const nVocab = tokens.length;
  const nEmbd = 64;
  const nHead = 4;
  const nFf = 128;
  const kvs: Kv[] = [
    ['general.architecture', T.STRING, 'llama'],
    ['general.name', T.STRING, 'kbchat-tiny-test'],
    ['general.alignment', T.U32, 32],
    ['llama.context_length', T.U32, 256],
    ['llama.embedding_length', T.U32, nEmbd],
    ['llama.block_count', T.U32, 1],
    ['llama.feed_forward_length', T.U32, nFf],
    ['llama.attention.head_count', T.U32, nHead],
    ['llama.attention.head_count_kv', T.U32, nHead],
    ['llama.rope.dimension_count', T.U32, nEmbd / nHead],
    ['llama.attention.layer_norm_rms_epsilon', T.F32, 1e-5],
    ['llama.vocab_size', T.U32, nVocab],
    ['tokenizer.ggml.model', T.STRING, 'llama'],
    ['tokenizer.ggml.tokens', T.ARRAY, T.STRING, tokens],
    ['tokenizer.ggml.scores', T.ARRAY, T.F32, scores],
    ['tokenizer.ggml.token_type', T.ARRAY, T.I32, types],
    ['tokenizer.ggml.unknown_token_id', T.U32, 0],
    ['tokenizer.ggml.bos_token_id', T.U32, 1],
    ['tokenizer.ggml.eos_token_id', T.U32, 2],
    ['tokenizer.ggml.add_bos_token', T.BOOL, true],
  ];

  let state = seed >>> 0 || 1;
  const random = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return ((state >>> 0) / 0xffffffff) * 2 - 1;
  };
  const tensors: { name: string; dims: number[]; data: Float32Array }[] = [];
  const add = (name: string, dims: number[], fill: (i: number) => number): void => {
    const n = dims.reduce((a, b) => a * b, 1);
    tensors.push({ name, dims, data: Float32Array.from({ length: n }, (_, i) => fill(i)) });
  };
  const ones = () => 1;
  const rand = (scale: number) => () => random() * scale;
  // ggml dims are [columns, rows]: a weight of n_in x n_out is [n_in, n_out].
  add('token_embd.weight', [nEmbd, nVocab], rand(0.5));
  add('output_norm.weight', [nEmbd], ones);
  add('output.weight', [nEmbd, nVocab], (i) => (Math.floor(i / nEmbd) >= 259 ? random() * 2 : 0));
  add('blk.0.attn_norm.weight', [nEmbd], ones);
  add('blk.0.attn_q.weight', [nEmbd, nEmbd], rand(0.1));
  add('blk.0.attn_k.weight', [nEmbd, nEmbd], rand(0.1));
  add('blk.0.attn_v.weight', [nEmbd, nEmbd], rand(0.1));
  add('blk.0.attn_output.weight', [nEmbd, nEmbd], rand(0.1));
  add('blk.0.ffn_norm.weight', [nEmbd], ones);
  add('blk.0.ffn_gate.weight', [nEmbd, nFf], rand(0.1));
  add('blk.0.ffn_up.weight', [nEmbd, nFf], rand(0.1));
  add('blk.0.ffn_down.weight', [nFf, nEmbd], rand(0.1));

  const w = new Writer();
  w.bytes(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kvs.length);
  for (const kv of kvs) {
    w.str(kv[0]);
    w.u32(kv[1]);
    if (kv[1] === T.ARRAY) {
      const [, , elementType, values] = kv;
      w.u32(elementType);
      w.u64(values.length);
      for (const v of values) {
        if (elementType === T.STRING) w.str(v as string);
        else if (elementType === T.F32) w.f32(v as number);
        else w.i32(v as number);
      }
    } else if (kv[1] === T.STRING) w.str(kv[2] as string);
    else if (kv[1] === T.U32) w.u32(kv[2] as number);
    else if (kv[1] === T.F32) w.f32(kv[2] as number);
    else w.bytes(Buffer.from([kv[2] ? 1 : 0]));
  }
  let offset = 0;
  for (const t of tensors) {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(0); // GGML_TYPE_F32
    w.u64(offset);
    offset += Math.ceil((t.data.length * 4) / 32) * 32;
  }
  w.pad(32);
  for (const t of tensors) {
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad(32);
  }
  writeFileSync(path, w.buffer());
  return nVocab;
}
