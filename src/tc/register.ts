/**
 * Registers the tc message types' body decoders with the protocol registry,
 * so `synplug decode` prints qdisc, class and filter messages (requests and
 * replies) as the entries tc -j shows.
 *
 * @module
 */
import { NETLINK_ROUTE } from '../netlink/message.js';
import { registerBodyDecoder } from '../netlink/protocols.js';
import {
  RTM_NEWQDISC,
  RTM_DELQDISC,
  RTM_GETQDISC,
  RTM_NEWTCLASS,
  RTM_DELTCLASS,
  RTM_GETTCLASS,
  RTM_NEWTFILTER,
  RTM_DELTFILTER,
  RTM_GETTFILTER,
} from '../netlink/route/constants.js';
import { decodeClass, decodeFilter, decodeQdisc } from './decode.js';

for (const t of [RTM_NEWQDISC, RTM_DELQDISC, RTM_GETQDISC]) registerBodyDecoder(NETLINK_ROUTE, t, (m) => decodeQdisc(m));
for (const t of [RTM_NEWTCLASS, RTM_DELTCLASS, RTM_GETTCLASS]) registerBodyDecoder(NETLINK_ROUTE, t, (m) => decodeClass(m));
for (const t of [RTM_NEWTFILTER, RTM_DELTFILTER, RTM_GETTFILTER]) registerBodyDecoder(NETLINK_ROUTE, t, (m) => decodeFilter(m));
