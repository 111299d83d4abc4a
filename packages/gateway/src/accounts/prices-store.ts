// SQL for model prices.
import type { Kysely } from 'kysely';
import { updateElseInsert } from '../store/db.js';
import type { GatewayTables } from '../store/schema.js';

export interface PriceRow {
  model: string;
  input_price: number;
  output_price: number;
}

export class PricesStore {
  constructor(private readonly db: Kysely<GatewayTables>) {}

  async list(): Promise<PriceRow[]> {
    const rows = await this.db.selectFrom('model_prices').select(['model', 'input_price', 'output_price']).execute();
    return rows.map((r) => ({ model: r.model, input_price: Number(r.input_price), output_price: Number(r.output_price) }));
  }

  async upsert(model: string, inputPrice: number, outputPrice: number): Promise<void> {
    const row = { model, input_price: inputPrice, output_price: outputPrice, updated_at: Date.now() };
    await updateElseInsert(
      () => this.db.updateTable('model_prices').set(row).where('model', '=', model).executeTakeFirst(),
      () => this.db.insertInto('model_prices').values(row).execute(),
    );
  }

  async delete(model: string): Promise<boolean> {
    const r = await this.db.deleteFrom('model_prices').where('model', '=', model).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
