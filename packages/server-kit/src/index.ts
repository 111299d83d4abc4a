// What the gateway and the platform share as servers: one Fastify base
// (service-app.ts), starting and closing (listen.ts), and the parts it is made
// of, which the services also use alone (the gateway's relay fronts answer
// on node:http with http-server.ts).
export * from './service-app.js';
export * from './listen.js';
export * from './http-server.js';
export * from './openapi.js';
export * from './answer-check.js';
export * from './web-app.js';
export * from './observability.js';
export * from './csrf.js';
export * from './passwords.js';
