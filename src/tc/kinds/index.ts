/**
 * The qdisc kinds this library knows: one export per kind. A new kind is one
 * new file in this folder and one line here; nothing else switches on kinds.
 *
 * @module
 */
export { prio } from './prio.js';
export { pfifo, bfifo, pfifoHeadDrop } from './fifo.js';
export { pfifoFast } from './pfifo_fast.js';
export { plug } from './plug.js';
export { htb } from './htb.js';
export { tbf } from './tbf.js';
export { ingress } from './ingress.js';
export { clsact } from './clsact.js';
export { fqCodel } from './fq_codel.js';
export { noqueue } from './noqueue.js';
