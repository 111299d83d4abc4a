// Placeholder until the admin API lands.
import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../gateway.js';

export function adminRoutes(_app: FastifyInstance, _services: GatewayServices): void {}
