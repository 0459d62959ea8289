// `node --import ./fs-glob-register.mjs conformance …`: registers fs-glob-hooks.mjs before the CLI loads.
import { register } from 'node:module';

register('./fs-glob-hooks.mjs', import.meta.url);
