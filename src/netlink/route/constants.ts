/**
 * rtnetlink message types (linux/rtnetlink.h, `enum { RTM_BASE = 16, ... }`)
 * and their registration with the core's protocol registry.
 *
 * @module
 */
import { NETLINK_ROUTE } from '../message.js';
import { registerProtocol } from '../protocols.js';

export const RTM_NEWLINK = 16;
export const RTM_DELLINK = 17;
export const RTM_GETLINK = 18;
export const RTM_SETLINK = 19;
export const RTM_NEWADDR = 20;
export const RTM_DELADDR = 21;
export const RTM_GETADDR = 22;
export const RTM_NEWROUTE = 24;
export const RTM_DELROUTE = 25;
export const RTM_GETROUTE = 26;
export const RTM_NEWNEIGH = 28;
export const RTM_DELNEIGH = 29;
export const RTM_GETNEIGH = 30;
export const RTM_NEWRULE = 32;
export const RTM_DELRULE = 33;
export const RTM_GETRULE = 34;
export const RTM_NEWQDISC = 36;
export const RTM_DELQDISC = 37;
export const RTM_GETQDISC = 38;
export const RTM_NEWTCLASS = 40;
export const RTM_DELTCLASS = 41;
export const RTM_GETTCLASS = 42;
export const RTM_NEWTFILTER = 44;
export const RTM_DELTFILTER = 45;
export const RTM_GETTFILTER = 46;
export const RTM_NEWACTION = 48;
export const RTM_DELACTION = 49;
export const RTM_GETACTION = 50;
export const RTM_NEWCHAIN = 100;
export const RTM_DELCHAIN = 101;
export const RTM_GETCHAIN = 102;

const RTM_NAMES: Record<number, string> = {
  16: 'RTM_NEWLINK',
  17: 'RTM_DELLINK',
  18: 'RTM_GETLINK',
  19: 'RTM_SETLINK',
  20: 'RTM_NEWADDR',
  21: 'RTM_DELADDR',
  22: 'RTM_GETADDR',
  24: 'RTM_NEWROUTE',
  25: 'RTM_DELROUTE',
  26: 'RTM_GETROUTE',
  28: 'RTM_NEWNEIGH',
  29: 'RTM_DELNEIGH',
  30: 'RTM_GETNEIGH',
  32: 'RTM_NEWRULE',
  33: 'RTM_DELRULE',
  34: 'RTM_GETRULE',
  36: 'RTM_NEWQDISC',
  37: 'RTM_DELQDISC',
  38: 'RTM_GETQDISC',
  40: 'RTM_NEWTCLASS',
  41: 'RTM_DELTCLASS',
  42: 'RTM_GETTCLASS',
  44: 'RTM_NEWTFILTER',
  45: 'RTM_DELTFILTER',
  46: 'RTM_GETTFILTER',
  48: 'RTM_NEWACTION',
  49: 'RTM_DELACTION',
  50: 'RTM_GETACTION',
  100: 'RTM_NEWCHAIN',
  101: 'RTM_DELCHAIN',
  102: 'RTM_GETCHAIN',
};

registerProtocol({
  protocol: NETLINK_ROUTE,
  name: 'NETLINK_ROUTE',
  typeName: (t) => RTM_NAMES[t],
  // RTM types come in NEW, DEL, GET, (SET) groups of four from RTM_BASE = 16.
  requestKind: (t) => (t < 16 ? 'other' : (['new', 'del', 'get', 'new'] as const)[(t - 16) % 4]),
});
