export { default } from '../../vitest.cluster.js';
