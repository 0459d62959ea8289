import type { IncomingMessage } from 'node:http';

/** Reads a whole request body as UTF-8 (fixtures only; bodies are small). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
