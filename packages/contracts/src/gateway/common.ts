// Limits and answer shapes several of the gateway's contracts share.
import { z } from 'zod';

/** Largest amount of money (currency units) the API accepts: keeps micros a safe integer. */
export const MAX_UNITS = 1_000_000_000;

/** Ids and other integer columns are 32-bit on every store. */
export const MAX_INT32 = 2_147_483_647;

/** A page of a list (users, tokens, channels): its rows, how many match in all, and where it starts. */
export const gatewayPageOf = <T extends z.ZodType>(row: T) => z.object({ data: z.array(row), total: z.number(), offset: z.number(), limit: z.number() });

/** DELETE of a user, token or channel: which one went. */
export const gatewayDeletedSchema = z.object({ deleted: z.literal(true), id: z.number() });
export type GatewayDeleted = z.infer<typeof gatewayDeletedSchema>;
