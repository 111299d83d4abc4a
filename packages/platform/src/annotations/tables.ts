// An application's annotations (annotations/migration.ts).
export interface AnnotationsTable {
  id: string;
  team_id: string;
  app_id: string;
  question: string;
  answer: string;
  /** The stored answer it corrects (both set, or neither). */
  chat_id: string | null;
  data_id: string | null;
  /** The question's vector and the model that made it; null until a chat first needs it. */
  vector_model: string | null;
  vector: number[] | null;
  created_at: number;
  updated_at: number;
}

export interface AnnotationsTables {
  annotations: AnnotationsTable;
}
