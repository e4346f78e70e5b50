/**
 * Writes a tiny BERT-like text-embedding model that transformers.js can load
 * from a local folder with no network: `config.json`, `tokenizer.json`,
 * `tokenizer_config.json` and `onnx/model.onnx`. Tests use it in place of a
 * real model, whose weights this machine cannot download.
 *
 * The ONNX file is encoded here by hand (protobuf wire format, a few dozen
 * lines), so the generator needs no package at all. Its graph:
 *
 *     tokens = Gather(word_embeddings[V, H], input_ids)        [B, S, H]
 *     types  = Gather(type_embeddings[2, H], token_type_ids)   [B, S, H]
 *     hidden = Tanh(MatMul(tokens + types, dense[H, H]))        [B, S, H]
 *     last_hidden_state = hidden * Unsqueeze(float(attention_mask), -1)
 *
 * Weights come from a seeded generator, so the same options give the same
 * bytes. Pooling and normalisation are left to the caller (transformers.js),
 * as with a real sentence-transformers export.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { mulberry32 } from '../core/random.js'

/** What {@link writeTinyBertModel} wrote. */
export interface TinyBertModel {
  /** The folder holding the model files (the `modelPath` to load it from). */
  dir: string
  /** Width of `last_hidden_state`, and so of every pooled embedding. */
  hiddenSize: number
  /** Number of tokens in the WordPiece vocabulary. */
  vocabSize: number
  /** Largest sequence length (tokens, specials included) the tokenizer emits. */
  maxLength: number
}

/** Options of {@link writeTinyBertModel}. */
export interface TinyBertOptions {
  /** Hidden size H (default 16). */
  hiddenSize?: number
  /** Seed for the weights (default 1). */
  seed?: number
  /** `model_max_length` of the tokenizer (default 64 tokens). */
  maxLength?: number
}

const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const

/**
 * The WordPiece vocabulary: the five BERT special tokens, then every
 * lowercase letter, digit and common ASCII punctuation mark, then the same
 * letters and digits as `##` continuations, so every ASCII word tokenizes.
 */
export function tinyVocabulary(): string[] {
  const chars = [...'abcdefghijklmnopqrstuvwxyz0123456789']
  const punctuation = [...'.,:;!?-_\'"()[]{}/\\@#$%^&*+=<>|`~']
  return [...SPECIAL_TOKENS, ...chars, ...punctuation, ...chars.map((c) => `##${c}`)]
}

/**
 * Writes the tiny model into `dir` (created if missing) and describes it.
 *
 * @param dir - target folder; existing files of the same names are replaced.
 */
export async function writeTinyBertModel(dir: string, options: TinyBertOptions = {}): Promise<TinyBertModel> {
  const hiddenSize = options.hiddenSize ?? 16
  const maxLength = options.maxLength ?? 64
  const vocab = tinyVocabulary()
  await mkdir(path.join(dir, 'onnx'), { recursive: true })
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(configJson(hiddenSize, vocab.length, maxLength), null, 2))
  await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab), null, 2))
  await writeFile(path.join(dir, 'tokenizer_config.json'), JSON.stringify(tokenizerConfigJson(maxLength), null, 2))
  await writeFile(
    path.join(dir, 'onnx', 'model.onnx'),
    encodeTinyBertOnnx({ vocabSize: vocab.length, hiddenSize, seed: options.seed ?? 1 }),
  )
  return { dir, hiddenSize, vocabSize: vocab.length, maxLength }
}

function configJson(hiddenSize: number, vocabSize: number, maxLength: number) {
  return {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: hiddenSize,
    num_attention_heads: 1,
    num_hidden_layers: 1,
    intermediate_size: hiddenSize,
    vocab_size: vocabSize,
    type_vocab_size: 2,
    max_position_embeddings: maxLength,
    pad_token_id: 0,
  }
}

function tokenizerConfigJson(maxLength: number) {
  return {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    model_max_length: maxLength,
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    mask_token: '[MASK]',
  }
}

function tokenizerJson(vocab: string[]) {
  const ids = new Map(vocab.map((t, i) => [t, i]))
  const id = (t: string): number => ids.get(t)!
  const special = (token: string, typeId: number) => ({ SpecialToken: { id: token, type_id: typeId } })
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content) => ({
      id: id(content),
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]', 0), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]', 0)],
      pair: [
        special('[CLS]', 0),
        { Sequence: { id: 'A', type_id: 0 } },
        special('[SEP]', 0),
        { Sequence: { id: 'B', type_id: 1 } },
        special('[SEP]', 1),
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [id('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [id('[SEP]')], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(ids),
    },
  }
}

// ---------------------------------------------------------------------------
// ONNX encoding (protobuf wire format; field numbers from onnx/onnx.proto)

/** A protobuf message under construction: fields appended in order. */
class Message {
  private readonly parts: Uint8Array[] = []

  /** Field of wire type 0 (int32, int64, enum), for non-negative values. */
  varint(field: number, value: number): this {
    this.parts.push(Uint8Array.from([...encodeVarint(field * 8), ...encodeVarint(value)]))
    return this
  }

  /** Field of wire type 2 holding raw bytes. */
  bytes(field: number, value: Uint8Array): this {
    this.parts.push(Uint8Array.from([...encodeVarint(field * 8 + 2), ...encodeVarint(value.length)]), value)
    return this
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value))
  }

  message(field: number, value: Message): this {
    return this.bytes(field, value.encode())
  }

  /** Repeated varint field, packed (proto3 default). */
  packed(field: number, values: readonly number[]): this {
    return this.bytes(field, Uint8Array.from(values.flatMap((v) => encodeVarint(v))))
  }

  encode(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of this.parts) {
      out.set(p, at)
      at += p.length
    }
    return out
  }
}

function encodeVarint(value: number): number[] {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint out of range: ${value}`)
  const out: number[] = []
  let v = value
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80)
    v = Math.floor(v / 0x80)
  }
  out.push(v)
  return out
}

const DT_FLOAT = 1
const DT_INT64 = 7
const ATTR_INT = 2

function floatTensor(name: string, dims: number[], data: Float32Array): Message {
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  // TensorProto: dims = 1, data_type = 2, name = 8, raw_data = 9 (little-endian)
  return new Message().packed(1, dims).varint(2, DT_FLOAT).string(8, name).bytes(9, raw)
}

function int64Tensor(name: string, values: number[]): Message {
  const raw = new Uint8Array(values.length * 8)
  const view = new DataView(raw.buffer)
  for (const [i, v] of values.entries()) view.setBigInt64(i * 8, BigInt(v), true)
  return new Message().packed(1, [values.length]).varint(2, DT_INT64).string(8, name).bytes(9, raw)
}

/** ValueInfoProto of a tensor whose dimensions are symbolic names or sizes. */
function tensorInfo(name: string, elemType: number, dims: (string | number)[]): Message {
  const shape = new Message()
  // TensorShapeProto.dim = 1; Dimension: dim_value = 1, dim_param = 2
  for (const d of dims) shape.message(1, typeof d === 'number' ? new Message().varint(1, d) : new Message().string(2, d))
  // TypeProto.tensor_type = 1; TypeProto.Tensor: elem_type = 1, shape = 2
  const type = new Message().message(1, new Message().varint(1, elemType).message(2, shape))
  return new Message().string(1, name).message(2, type)
}

/** NodeProto: input = 1, output = 2, name = 3, op_type = 4, attribute = 5. */
function node(opType: string, inputs: string[], outputs: string[], attributes: Message[] = []): Message {
  const n = new Message()
  for (const i of inputs) n.string(1, i)
  for (const o of outputs) n.string(2, o)
  n.string(3, `${opType}_${outputs[0]}`).string(4, opType)
  for (const a of attributes) n.message(5, a)
  return n
}

/** AttributeProto of type INT: name = 1, i = 3, type = 20. */
function intAttribute(name: string, value: number): Message {
  return new Message().string(1, name).varint(3, value).varint(20, ATTR_INT)
}

/**
 * Encodes the model's ONNX graph (IR 8, opset 17) as bytes.
 *
 * Inputs `input_ids`, `attention_mask`, `token_type_ids`: int64 [batch, sequence].
 * Output `last_hidden_state`: float32 [batch, sequence, hiddenSize], zero at padded positions.
 */
export function encodeTinyBertOnnx(options: { vocabSize: number; hiddenSize: number; seed: number }): Uint8Array {
  const { vocabSize, hiddenSize: h, seed } = options
  // Deterministic weights in [-1, 1).
  const next = mulberry32(seed)
  const rand = (): number => next() * 2 - 1
  const fill = (n: number) => Float32Array.from({ length: n }, rand)

  const graph = new Message()
  // GraphProto: node = 1, name = 2, initializer = 5, input = 11, output = 12
  graph.message(1, node('Gather', ['word_embeddings', 'input_ids'], ['tokens'], [intAttribute('axis', 0)]))
  graph.message(1, node('Gather', ['type_embeddings', 'token_type_ids'], ['types'], [intAttribute('axis', 0)]))
  graph.message(1, node('Add', ['tokens', 'types'], ['embedded']))
  graph.message(1, node('MatMul', ['embedded', 'dense'], ['projected']))
  graph.message(1, node('Tanh', ['projected'], ['activated']))
  graph.message(1, node('Cast', ['attention_mask'], ['mask_float'], [intAttribute('to', DT_FLOAT)]))
  graph.message(1, node('Unsqueeze', ['mask_float', 'last_axis'], ['mask_3d']))
  graph.message(1, node('Mul', ['activated', 'mask_3d'], ['last_hidden_state']))
  graph.string(2, 'tiny_bert')
  graph.message(5, floatTensor('word_embeddings', [vocabSize, h], fill(vocabSize * h)))
  graph.message(5, floatTensor('type_embeddings', [2, h], fill(2 * h)))
  graph.message(5, floatTensor('dense', [h, h], fill(h * h)))
  graph.message(5, int64Tensor('last_axis', [2]))
  graph.message(11, tensorInfo('input_ids', DT_INT64, ['batch_size', 'sequence_length']))
  graph.message(11, tensorInfo('attention_mask', DT_INT64, ['batch_size', 'sequence_length']))
  graph.message(11, tensorInfo('token_type_ids', DT_INT64, ['batch_size', 'sequence_length']))
  graph.message(12, tensorInfo('last_hidden_state', DT_FLOAT, ['batch_size', 'sequence_length', h]))

  // ModelProto: ir_version = 1, producer_name = 2, graph = 7, opset_import = 8 (OperatorSetIdProto: domain = 1, version = 2)
  return new Message()
    .varint(1, 8)
    .string(2, 'mnemo-tiny-onnx')
    .message(7, graph)
    .message(8, new Message().string(1, '').varint(2, 17))
    .encode()
}
