// /api/core/app/annotation/*: an application's curated replies. With the
// app's annotationReply on, a question close enough to an annotation's is
// answered with its answer, word for word, and nothing else runs.
import { z } from 'zod';
import { id, pageOf } from './common.js';

/** The application setting (PUT /api/core/app/update {appId, annotationReply}). */
export const annotationReplySchema = z.object({
  enabled: z.boolean().default(false),
  /** How close a question must be to an annotation's (0-1: cosine with a vector model, word overlap without one). */
  similarity: z.number().min(0).max(1).default(0.9),
});
export type AnnotationReply = z.infer<typeof annotationReplySchema>;

const question = z.string().trim().min(1).max(10_000);
const answer = z.string().trim().min(1).max(100_000);

export const createAnnotationBody = z
  .object({
    appId: id,
    question,
    answer,
    /** The stored answer it corrects: chatId and dataId together. */
    chatId: id.optional(),
    dataId: id.optional(),
  })
  .refine((b) => (b.chatId === undefined) === (b.dataId === undefined), { message: 'chatId and dataId go together', path: ['dataId'] });
export type CreateAnnotationBody = z.input<typeof createAnnotationBody>;

export const listAnnotationsQuery = z.object({
  appId: id,
  offset: z.coerce.number().int().min(0).default(0),
  pageSize: z.coerce.number().int().min(1).max(500).default(20),
  /** In the question or the answer (case-insensitive). */
  searchText: z.string().trim().max(200).optional(),
});
export type ListAnnotationsQuery = z.input<typeof listAnnotationsQuery>;

export const updateAnnotationBody = z.object({ id, question: question.optional(), answer: answer.optional() });
export type UpdateAnnotationBody = z.input<typeof updateAnnotationBody>;
export const annotationIdQuery = z.object({ id });

/** POST /api/core/app/annotation/import: CSV text whose first two columns are question,answer (a header row of those names is skipped). */
export const importAnnotationsBody = z.object({ appId: id, csv: z.string().min(1).max(5_000_000) });
export type ImportAnnotationsBody = z.input<typeof importAnnotationsBody>;
export const annotationsImportedSchema = z.object({
  created: z.number(),
  /** Rows left out, each with its number in the file (1 is the first) and why: an empty or too long question or answer, a question already there. */
  skipped: z.array(z.object({ row: z.number(), reason: z.string() })),
});
export type AnnotationsImported = z.infer<typeof annotationsImportedSchema>;

export const annotationsExportQuery = z.object({ appId: id });

export const publicAnnotationSchema = z.object({
  _id: z.string(),
  id: z.string(),
  appId: z.string(),
  question: z.string(),
  answer: z.string(),
  chatId: z.string().optional(),
  dataId: z.string().optional(),
  /** How many answers it has given. */
  hitCount: z.number(),
  createTime: z.string(),
  updateTime: z.string(),
});
export type PublicAnnotation = z.infer<typeof publicAnnotationSchema>;
export const annotationPageSchema = pageOf(publicAnnotationSchema);
