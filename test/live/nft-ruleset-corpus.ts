/**
 * The differential corpus of `show ruleset`: one nft table per entry, in
 * every family, together covering every expression the decoder prints
 * (payload, meta, cmp, bitwise, immediate, counter, lookup, ct, limit, log,
 * quota, reject, nat, masq, redir, fib, objref, range, byteorder, connlimit,
 * numgen, hash, exthdr, tproxy, dynset, notrack, rt, socket, synproxy, osf, dup, fwd), set and map types,
 * concatenations, intervals, named objects, base chains at named and
 * numbered priorities. Each table is written as nft 1.0.6 lists it, so
 * that `nft -f` of it and `nft list ruleset` print the same text.
 * Only addresses of 169.254.0.0/16, 127.0.0.0/8 and fd00::/8.
 *
 * What this machine's kernel cannot load is in the VM's corpus
 * (test/kernel/nft-ruleset-roundtrip-vm.test.ts).
 *
 * @module
 */

/** Tables by name (`family name`), each in nft's syntax; `setup`: shell commands run first in each namespace (devices). */
export const CORPUS: ReadonlyArray<{ table: string; text: string; setup?: string }> = [
  // a whole device name ending in `*` (not a wildcard) is written escaped: `"ab\\*"`
  {
    table: 'inet rt_star',
    text: `table inet rt_star {
	chain c {
		iifname "ab\\*" accept
		iifname "ab*" accept
		iifname "a*b" accept
		oifname != "z\\*" drop
	}
}
`,
  },
  // flags under a mask, compared equal or not (iptables' `! --syn`): `value / mask` for a mask of several
  // flags, `& mask == value` for one
  {
    table: 'inet rt_flagmask',
    text: `table inet rt_flagmask {
	chain c {
		tcp flags != syn / fin,syn,rst,ack ct state new drop
		tcp flags syn / fin,syn,rst,ack drop
		tcp flags syn,ack / syn,ack drop
		tcp flags != syn,ack / syn,ack drop
		ct state new / established,new drop
		ct state != new / established,new drop
		ct status dnat / snat,dnat drop
		ct status != dnat / snat,dnat drop
		tcp flags & syn == syn drop
		tcp flags & syn != syn drop
		ct state & new == new drop
		ct status & dnat != dnat drop
		ct state & 0x80 == 0x80 accept
		ct state & untracked == untracked accept
	}
}
`,
  },
  // elements of several flags (`syn | ack`), sorted by their lowest flag (nft lists equals in the
  // reverse of the kernel's order, which its own listing does not keep: none here)
  {
    table: 'inet rt_flagset',
    text: `table inet rt_flagset {
	set fs {
		type tcp_flag
		elements = { fin | psh | ack, syn | ack, rst }
	}

	chain c {
		tcp flags { fin, syn | ack } accept
		tcp flags { fin, rst | ack, syn | ack } drop
		ct state { established | related, new } accept
		tcp flags vmap { fin | ack : drop, syn : accept }
		tcp flags @fs drop
	}
}
`,
  },
  // ct state / status bits nft does not name: in hex, each bit on its own (JSON numbers)
  {
    table: 'inet rt_ctbits',
    text: `table inet rt_ctbits {
	chain c {
		ct state 0x80 accept
		ct status 0x10000 accept
		ct state 0x80,0x100 accept
		ct status 0x10000,0x20000 accept
		ct state new,0x80,0x100 accept
		ct state != 0x80 accept
		ct status == 0x10000 accept
		ct state { new, 0x80 | 0x100 } accept
		ct state vmap { 0x80 : accept }
		ct status expected accept
	}
}
`,
  },
  // typeof sets and maps of host-order values (ct zone, meta length, ct bytes: u16, u32, u64), alone and
  // in concatenations; anonymous maps to host-order values (ct zone, meta priority)
  {
    table: 'inet rt_typeofhost',
    text: `table inet rt_typeofhost {
	set a {
		typeof ct zone
		elements = { 1, 7, 300 }
	}

	set b {
		typeof ct zone . ip saddr
		elements = { 300 . 127.0.0.1,
			     7 . 127.0.0.2,
			     1 . 127.0.0.3,
			     256 . 127.0.0.4 }
	}

	map m {
		typeof ip saddr : meta length
		elements = { 127.0.0.1 : 1000 }
	}

	set c {
		typeof ct bytes . ip saddr
		elements = { 1000 . 127.0.0.1 }
	}

	set d {
		typeof ip ttl . ip saddr
		elements = { 64 . 127.0.0.1 }
	}

	map z {
		typeof ip saddr : ct zone
		elements = { 127.0.0.1 : 9 }
	}

	set e {
		typeof ct packets . ct avgpkt . ip saddr
		elements = { 1 . 2 . 127.0.0.1,
			     300 . 4 . 127.0.0.2 }
	}

	set f {
		typeof ct zone
		flags interval
		elements = { 7-9, 300 }
	}

	set g {
		typeof meta length . ip saddr
		flags interval
		elements = { 100-200 . 127.0.0.1 }
	}

	map i {
		typeof ct zone : meta priority
		elements = { 3 : 1:2 }
	}

	chain c {
		ct zone set meta mark map { 0x00000001 : 5 }
		meta priority set meta mark map { 0x00000001 : 1:2 }
		ct zone set ip saddr map @z
	}
}
`,
  },
  // the timeout flag beside a default timeout: listed with another flag only; auto-merge after the flags and counter
  {
    table: 'inet rt_settimeout',
    text: `table inet rt_settimeout {
	set a {
		type ipv4_addr
		flags interval,timeout
		timeout 1h
	}

	set b {
		type ipv4_addr
		flags interval,timeout
		counter
		auto-merge
		timeout 1h
		gc-interval 2h
		comment "x"
	}

	set c {
		type ipv4_addr
		timeout 1h
	}

	set e {
		type ipv4_addr
		flags interval,timeout
	}

	set f {
		type ipv4_addr
		flags dynamic,timeout
		timeout 1h
	}

	set g {
		type ipv4_addr
		flags timeout
	}

	set h {
		type ipv4_addr
		flags interval
		counter
		auto-merge
	}
}
`,
  },
  // comments of named objects: first in each block
  {
    table: 'inet rt_objc',
    text: `table inet rt_objc {
	counter c1 {
		comment "c1"
		packets 0 bytes 0
	}

	quota q {
		comment "quota of q"
		5 mbytes
	}

	limit l {
		comment "lc"
		rate 1/minute
	}

	ct helper h {
		comment "hc"
		type "ftp" protocol tcp
		l3proto inet
	}

	counter c2 {
		packets 0 bytes 0
	}
}
`,
  },
  {
    table: 'inet rt_inet',
    text: `table inet rt_inet {
	counter cnt1 {
		packets 0 bytes 0
	}
	quota q1 {
		over 10 mbytes used 0 bytes
	}
	limit l1 {
		rate 10/second
	}
	ct helper ftp-standard {
		type "ftp" protocol tcp
		l3proto inet
	}
	set s4 {
		type ipv4_addr
		flags interval
		elements = { 127.0.0.0/8, 169.254.1.1 }
	}
	set s6 {
		type ipv6_addr
		elements = { fd00::1, fd00::2 }
	}
	set ports {
		type inet_service
		elements = { 22, 80, 443 }
	}
	set dyn {
		type ipv4_addr
		size 1024
		flags dynamic,timeout
		timeout 1m
	}
	set conc {
		type ipv4_addr . inet_service
		elements = { 169.254.0.1 . 22, 169.254.0.2 . 80 }
	}
	map vm {
		type inet_service : verdict
		elements = { 22 : accept, 23 : drop }
	}
	map mm {
		type ipv4_addr : mark
		elements = { 169.254.0.1 : 0x00000005 }
	}
	map cm {
		type ipv4_addr : counter
		elements = { 169.254.0.1 : "cnt1" }
	}

	set ty1 {
		typeof ip saddr . tcp dport
		elements = { 169.254.0.1 . 22 }
	}

	set ty2 {
		typeof iifname
	}

	map ty3 {
		typeof ip6 daddr : meta mark
	}

	set ty4 {
		typeof ct state
	}
	chain input {
		type filter hook input priority filter; policy accept;
		iifname "lo" accept
		iif "lo" accept
		oifname "eth*" accept
		ct state established,related accept
		ct state invalid drop
		ct state new tcp dport 22 accept
		ct status dnat accept
		ct direction original accept
		ct mark 0x00000001 accept
		ct mark set 0x00000005
		ct zone set 3
		ct l3proto ipv4 accept
		ct protocol tcp accept
		ct expiration 30s accept
		ct helper "ftp" accept
		ct helper set "ftp-standard"
		ct original ip6 saddr fd00::1 accept
		ct reply ip daddr 169.254.0.1 accept
		ct original bytes > 100 accept
		ct packets 5 accept
		ip protocol udp udp dport 53 accept
		ip6 nexthdr tcp tcp dport 22 accept
		meta l4proto tcp tcp dport 22 accept
		tcp dport 22 accept
		tcp dport != 22 accept
		tcp dport 1000-2000 accept
		tcp dport != 1000-2000 accept
		meta mark != 0x00000001-0x00000005 accept
		tcp dport { 22, 80, 443 } accept
		tcp dport @ports accept
		tcp dport vmap @vm
		tcp dport vmap { 80 : accept, 81 : drop }
		tcp sport < 1024 accept
		tcp sport >= 1024 accept
		tcp flags syn accept
		tcp flags & (syn | ack) == syn accept
		tcp flags syn / syn,ack accept
		tcp flags == syn accept
		tcp sequence 5 accept
		tcp window 1024 accept
		udp sport 53 accept
		udp length 100 accept
		th dport 53 accept
		icmp type echo-request accept
		icmp type { echo-request, echo-reply } accept
		icmp code port-unreachable accept
		icmpv6 type echo-request accept
		icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept
		ip protocol icmp icmp type echo-request accept
		ip saddr 169.254.0.1 accept
		ip saddr != 169.254.0.1 accept
		ip saddr 169.254.0.0/16 accept
		ip daddr 169.254.0.1-169.254.0.9 accept
		ip saddr @s4 accept
		ip saddr { 169.254.0.1, 169.254.0.2 } accept
		ip6 saddr fd00::1 accept
		ip6 saddr fd00::/8 accept
		ip6 daddr @s6 accept
		ip dscp cs1 accept
		ip ecn ce accept
		ip ttl 64 accept
		ip length 100 accept
		ip id 1 accept
		ip frag-off & 0x1fff != 0 drop
		ip version 4 accept
		ip6 flowlabel 12345 accept
		ip6 hoplimit 255 accept
		ip6 dscp cs1 accept
		ip saddr . tcp dport @conc accept
		ip saddr . tcp dport { 169.254.0.1 . 22 } accept
		meta mark 0x00000005 accept
		meta mark set 0x00000001
		meta mark set ip saddr map @mm
		meta mark set ct mark
		meta mark set meta mark | 0x00000010
		meta mark set meta mark & 0x0000ff00
		meta mark set meta mark ^ 0x00000001
		ct mark set ct mark | 0x00000100
		ct mark set meta mark & 0x000000ff
		meta nfproto ipv4 accept
		meta l4proto { tcp, udp } accept
		meta length 100 accept
		meta pkttype broadcast drop
		meta priority set 1:2
		meta skuid 0 accept
		meta cpu 1 accept
		meta iiftype ether accept
		meta protocol ip accept
		meta mark 0x00000001-0x00000005 accept
		fib daddr type local accept
		fib daddr oif exists accept
		fib saddr . iif oif missing drop
		counter
		counter name "cnt1"
		counter name ip saddr map @cm
		quota name "q1"
		limit name "l1"
		quota over 10 mbytes used 1 mbytes
		quota 100 bytes
		limit rate 10/second
		limit rate over 10/minute burst 5 packets
		limit rate 1 mbytes/second
		log
		log prefix "in " level info
		log prefix "x " level debug flags all
		log group 2 prefix "g "
		reject
		reject with icmpx admin-prohibited
		reject with tcp reset
		meta nfproto ipv4 reject with icmp host-prohibited
		meta nfproto ipv6 reject with icmpv6 admin-prohibited
		ct count over 5 accept
		add @dyn { ip saddr }
		update @dyn { ip saddr timeout 30s }
		meta mark set numgen inc mod 2
		meta mark set numgen random mod 4 offset 1
		meta mark set jhash ip saddr mod 4
		meta mark set jhash ip saddr mod 4 seed 0x1 offset 10
		meta mark set symhash mod 2
		tcp option maxseg size 1400 accept
		tcp option sack-perm exists accept
		tcp option timestamp exists accept
		exthdr frag exists drop
		exthdr rt exists drop
		notrack
		socket transparent 1 accept
		socket mark 0x00000005 accept
		socket wildcard 0 drop
		accept
		drop
		jump other
		goto other
		return
		continue
		ip saddr . tcp dport @ty1 accept
		iifname @ty2 accept
		meta mark set ip6 daddr map @ty3
		ct state @ty4 accept
		meta mark 0x1 counter accept comment "a comment"
	}
	chain other {
	}
	chain nat_pre {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr 169.254.200.1 tcp dport 80 dnat ip to 169.254.200.2:8080
		ip6 daddr fd00::1 tcp dport 80 dnat ip6 to [fd00::2]:8080
		tcp dport 81 redirect to :8081
		redirect
	}
	chain nat_post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "sp-x" masquerade
		masquerade random,persistent
		meta l4proto tcp masquerade to :1024-2048
		ip saddr 169.254.0.0/16 snat ip to 169.254.1.1
		meta l4proto tcp snat ip to 169.254.1.1-169.254.1.9:1000-2000 fully-random
	}
	chain mangle {
		type filter hook prerouting priority mangle; policy accept;
		meta l4proto tcp meta mark set 0x00000001 tproxy ip to 127.0.0.1:8080
		meta l4proto udp tproxy ip6 to [::1]:53
	}
	chain raw {
		type filter hook prerouting priority raw; policy accept;
		notrack
		numgen random mod 2 vmap { 0 : accept, 1 : drop }
		symhash mod 2 vmap { 0 : accept, 1 : drop }
	}
	chain out {
		type route hook output priority mangle; policy accept;
		meta mark set 0x00000001
	}
	chain f2 {
		type filter hook forward priority filter + 10; policy drop;
	}
	chain sec {
		type filter hook input priority security; policy accept;
	}
	chain o2 {
		type filter hook output priority -160; policy accept;
	}
}
`,
  },
  {
    table: 'ip rt_ip',
    text: `table ip rt_ip {
	set a {
		type ipv4_addr
		flags interval
		auto-merge
		elements = { 169.254.0.0/16, 169.254.255.1-169.254.255.9 }
	}
	set m {
		type mark
		elements = { 0x00000001, 0x00000002 }
	}
	set pr {
		type inet_proto
		elements = { tcp, udp }
	}
	set et {
		type ether_addr
		elements = { 00:11:22:33:44:55 }
	}
	set ic {
		type icmp_type
		elements = { echo-reply, echo-request }
	}
	set ifs {
		type ifname
		elements = { "lo" }
	}
	set cs {
		type ct_state
		elements = { established, related }
	}
	map pm {
		type inet_service : ipv4_addr
		elements = { 80 : 169.254.0.1, 443 : 169.254.0.2 }
	}
	chain input {
		type filter hook input priority 0; policy accept;
		ip protocol tcp tcp dport 22 accept
		ip protocol icmp accept
		icmp type echo-request limit rate 1/second accept
		icmp code 3 accept
		icmp id 5 accept
		icmp type @ic accept
		ip saddr @a drop
		meta mark @m accept
		ip protocol @pr accept
		iifname @ifs accept
		ct state @cs accept
		tcp dport 80 ip saddr 169.254.0.1 accept
		udp dport { 53, 5353 } accept
		reject
		reject with icmp port-unreachable
		reject with icmp admin-prohibited
		reject with tcp reset
		ip daddr 169.254.0.1 reject with icmp host-unreachable
		sctp dport 5 accept
		dccp sport 7 accept
		esp spi 1 accept
		ah spi 2 accept
		udplite sport 3 accept
		igmp type 17 accept
		ip saddr & 255.255.0.0 == 169.254.0.0 accept
		ip checksum 0 accept
		ct original saddr 169.254.0.1 accept
		meta l4proto tcp ct original proto-dst 80 accept
		ct reply packets < 10 accept
		ip version 4 ip hdrlength 5 accept
		tcp doff 5 tcp reserved 0 accept
		tcp doff 8 accept
		@th,0,16 0x50 accept
	}
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		tcp dport 80 dnat to 169.254.0.9:8080
		dnat to tcp dport map @pm
		tcp dport 81 redirect to :8081
	}
	chain post {
		type nat hook postrouting priority 100; policy accept;
		masquerade
		oifname "lo" snat to 169.254.0.1
		snat prefix to 169.254.0.0/24
	}
	chain out {
		type nat hook output priority -100; policy accept;
	}
	chain mg {
		type filter hook prerouting priority mangle + 5; policy accept;
		meta l4proto tcp tproxy to 127.0.0.1:8080
		meta l4proto tcp tproxy to :8080
		ip dscp set cs1
	}
	chain rf {
		type filter hook prerouting priority -310; policy accept;
		notrack
	}
}
`,
  },
  {
    table: 'ip rt_ip_set',
    text: `table ip rt_ip_set {
	chain c {
		ip ttl set 64
		tcp dport set 8080
		ip daddr set 169.254.0.1
		udp sport set 53
	}
}
`,
  },
  {
    table: 'ip6 rt_ip6',
    text: `table ip6 rt_ip6 {
	set s {
		type ipv6_addr
		flags interval
		elements = { fd00::/8, fe80::1 }
	}
	chain input {
		type filter hook input priority filter; policy drop;
		icmpv6 type { nd-router-advert, nd-neighbor-advert } accept
		icmpv6 type packet-too-big accept
		icmpv6 code no-route accept
		ip6 saddr fe80::/10 accept
		ip6 saddr @s accept
		meta l4proto tcp tcp dport 22 accept
		ip6 nexthdr ipv6-icmp accept
		udp dport 546 accept
		meta l4proto ipv6-icmp accept
		exthdr hbh exists accept
		exthdr frag exists drop
		exthdr dst exists accept
		reject
		reject with icmpv6 admin-prohibited
		reject with tcp reset
		ip6 flowlabel 5 accept
		ip6 ecn ect0 accept
		ip6 length 40 accept
		ip6 daddr ::1 accept
	}
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		tcp dport 80 dnat to [fd00::2]:8080
		tcp dport 81 dnat to fd00::3
	}
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		masquerade
		snat to fd00::1
	}
	chain mg {
		type filter hook prerouting priority -150; policy accept;
		meta l4proto tcp tproxy to [::1]:8080
	}
}
`,
  },
  {
    table: 'arp rt_arp',
    text: `table arp rt_arp {
	chain in {
		type filter hook input priority filter; policy accept;
		arp operation request accept
		arp operation reply counter accept
		arp htype 1 accept
		arp ptype ip accept
		arp hlen 6 accept
		arp plen 4 accept
		arp saddr ip 169.254.0.1 accept
		arp daddr ip 169.254.0.0/16 accept
		arp saddr ether 00:11:22:33:44:55 accept
		arp operation { request, reply } accept
		meta iifname "lo" accept
		limit rate 5/second accept
		log prefix "arp " accept
	}
	chain out {
		type filter hook output priority filter + 1; policy accept;
		arp operation reply accept
	}
	chain c {
	}
}
`,
  },
  {
    table: 'bridge rt_br',
    text: `table bridge rt_br {
	chain fw {
		type filter hook forward priority filter; policy accept;
		vlan id 10 accept
		vlan id 10 vlan pcp 3 accept
		ether type vlan vlan type ip accept
		ether type ip tcp dport 22 accept
		ip saddr 169.254.1.2 accept
		ip protocol tcp tcp dport 22 accept
		ip6 nexthdr udp udp dport 53 accept
		ether saddr 00:11:22:33:44:55 drop
		ether daddr 01:00:5e:00:00:01 drop
		ether type arp accept
		ether type ip6 accept
		meta protocol ip ip saddr 169.254.1.3 accept
		meta pkttype multicast drop
		tcp dport 80 accept
		icmp type echo-request accept
		icmpv6 type echo-request accept
		iifname "lo" accept
	}
	chain pre {
		type filter hook prerouting priority -300; policy accept;
	}
	chain pre2 {
		type filter hook prerouting priority -200; policy accept;
	}
	chain out {
		type filter hook output priority 100; policy accept;
	}
	chain post {
		type filter hook postrouting priority srcnat; policy accept;
	}
	chain in {
		type filter hook input priority 0; policy accept;
	}
}
`,
  },
  {
    table: 'netdev rt_nd',
    text: `table netdev rt_nd {
	chain ing {
		type filter hook ingress device "lo" priority filter; policy accept;
		ip saddr 169.254.1.1 drop
		meta protocol ip ip daddr 169.254.1.2 drop
		ip protocol udp udp dport 53 accept
		ip6 nexthdr tcp tcp dport 22 accept
		tcp dport 22 accept
		meta protocol ip6 accept
		vlan id 5 drop
		meta mark set 0x00000001
		limit rate 100/second accept
		counter drop
		reject
		ether saddr 00:11:22:33:44:55 drop
	}
	chain ing2 {
		type filter hook ingress device "lo" priority -5; policy accept;
	}
}
`,
  },
  // host-order parts of concatenations (marks, device indexes by name) in
  // plain and interval sets, wildcard device names in sets
  {
    table: 'inet rt_concat',
    text: `table inet rt_concat {
	map cc {
		type ipv4_addr . mark : ipv4_addr
		elements = { 127.0.0.1 . 0x00000001 : 127.0.0.5 }
	}

	map mi {
		type mark . inet_service : mark
		elements = { 0x00000002 . 22 : 0x00000003 }
	}

	set mk {
		type mark . inet_service
		elements = { 0x00000005 . 22,
			     0x00000100 . 80 }
	}

	set mki {
		type mark . inet_service
		flags interval
		elements = { 0x00000005-0x00000007 . 22 }
	}

	set iifs {
		type iface_index . ipv4_addr
		elements = { "lo" . 127.0.0.1 }
	}

	set iifi {
		type iface_index . ipv4_addr
		flags interval
		elements = { "lo" . 127.0.0.0/8 }
	}

	set tym {
		typeof meta mark . tcp dport
		elements = { 0x00000009 . 22 }
	}

	set am {
		type ipv4_addr . mark
		flags interval
		elements = { 127.0.0.1 . 0x00000003 }
	}

	set wild {
		type ifname
		flags interval
		elements = { "eth*",
			     "lo",
			     "ve*" }
	}

	set wildc {
		type ipv4_addr . ifname
		flags interval
		elements = { 127.0.0.1 . "ve*" }
	}

	set cs {
		type ct_state . mark
		elements = { established . 0x00000001 }
	}

	chain c {
		iifname { "lo", "ve*" } accept
		oifname "eth*" accept
		meta mark . tcp dport @mk accept
		meta mark . tcp dport { 0x00000007 . 22 } accept
		meta mark . tcp dport { 0x00000001-0x00000004 . 22 } accept
		iif . ip saddr @iifs accept
		iif . ip saddr { "lo" . 127.0.0.2 } accept
		iifname @wild accept
		ip saddr . iifname @wildc accept
		ip saddr . meta mark @am accept
		ct state . meta mark @cs accept
		ip daddr set ip saddr . meta mark map @cc
		meta mark set meta mark . tcp dport map @mi
	}
}
`,
  },
  // comments of a table, sets, chains and set elements; element counters
  {
    table: 'inet rt_meta',
    text: `table inet rt_meta {
	comment "tbl comment"
	set s1 {
		typeof ip saddr . tcp dport
		flags interval
		counter
		auto-merge
		comment "a set"
		elements = { 127.0.0.1 . 22-25 counter packets 0 bytes 0 comment "el" }
	}

	set s2 {
		type ipv4_addr
		size 100
		counter
		comment "counted"
		elements = { 127.0.0.2 counter packets 0 bytes 0 comment "two", 127.0.0.3 counter packets 0 bytes 0 comment "three",
			     127.0.0.4 counter packets 0 bytes 0 }
	}

	map m1 {
		type ipv4_addr : verdict
		comment "a map"
		elements = { 127.0.0.5 comment "five" : accept }
	}

	chain nohook {
		comment "no hook chain"
	}

	chain base {
		comment "base chain"
		type filter hook input priority filter; policy accept;
		ip saddr . tcp dport @s1 accept
	}
}
`,
  },
  // a table switched off (`flags dormant`), with a comment
  {
    table: 'netdev rt_dormant',
    text: `table netdev rt_dormant {
	flags dormant
	comment "off"

	chain ing {
		type filter hook ingress device "lo" priority filter; policy accept;
		drop
	}
}
`,
  },
  // a dormant table without a comment
  {
    table: 'ip rt_dormant_ip',
    text: `table ip rt_dormant_ip {
	flags dormant

	chain c {
		type filter hook input priority filter; policy accept;
	}
}
`,
  },
  // flag fields compared with no flag (`tcp flags == 0x0`, `ct state 0x0`) and with none of some (`tcp flags ! syn,ack`)
  {
    table: 'inet rt_flags',
    text: `table inet rt_flags {
	chain c {
		tcp flags == 0x0 drop
		tcp flags 0x0 drop
		tcp flags != 0x0 accept
		tcp flags ! syn,ack drop
		icmpv6 mtu 1280 accept
		icmpv6 mtu 1280 accept
		icmp mtu 1500 accept
		ct state 0x0 drop
	}
}
`,
  },
  // the same for ct state and ct status
  {
    table: 'inet rt_flags2',
    text: `table inet rt_flags2 {
	chain c {
		ct state ! established,new drop
		ct status ! dnat drop
		tcp flags ! syn drop
		ct state == 0x0 drop
		ct state != 0x0 drop
		ct status 0x0 drop
	}
}
`,
  },
  // icmp fields of one icmp type (`icmp mtu`, `icmpv6 max-delay`): nft leaves that type's match out; echo fields keep theirs
  {
    table: 'inet rt_icmpdep',
    text: `table inet rt_icmpdep {
	chain c {
		icmp type { echo-reply, echo-request } icmp id 5 accept
		icmp type echo-request icmp id 5 accept
		icmp type echo-reply icmp sequence 5 accept
		icmp mtu 1500 accept
		icmp gateway 5 accept
		icmp type { echo-reply, echo-request } icmp sequence 7 accept
		icmp mtu 1500 accept
		icmpv6 type { echo-request, echo-reply } icmpv6 id 5 accept
		icmpv6 type echo-request icmpv6 id 5 accept
		icmpv6 mtu 1280 accept
		icmpv6 max-delay 5 accept
		icmpv6 max-delay 5 accept
	}
}
`,
  },
  // a netdev chain on several devices: nft lists them sorted, one device as `device "v0"`
  {
    table: 'netdev rt_devs',
    setup: 'ip link add rs_v1 type veth peer name rs_v0',
    text: `table netdev rt_devs {
	chain e {
		type filter hook egress devices = { rs_v0, rs_v1 } priority filter - 10; policy accept;
	}
	chain i {
		type filter hook ingress devices = { lo, rs_v0, rs_v1 } priority filter; policy accept;
	}
	chain j {
		type filter hook ingress device "rs_v1" priority filter; policy accept;
		counter packets 0 bytes 0 drop
	}
}
`,
  },
  // tproxy: an IPv6 address bracketed with or without a port; inet's family-less `tproxy to :80`
  {
    table: 'ip rt_tp2',
    text: `table ip rt_tp2 {
	chain c {
		type filter hook prerouting priority mangle;
		meta l4proto tcp tproxy to 127.0.0.1
		meta l4proto tcp tproxy to :1
		meta l4proto udp tproxy to 127.0.0.1:65535 accept
		meta l4proto tcp tproxy to 0.0.0.0:0
	}
}
`,
  },
  {
    table: 'inet rt_tp3',
    text: `table inet rt_tp3 {
	chain c {
		type filter hook prerouting priority mangle;
		meta l4proto tcp tproxy ip to 127.0.0.1
		meta l4proto tcp tproxy ip6 to [::1]
		meta l4proto tcp tproxy to :80
		meta nfproto ipv6 meta l4proto tcp tproxy ip6 to [fd00::1]:80
	}
}
`,
  },
  {
    table: 'ip6 rt_tp6',
    text: `table ip6 rt_tp6 {
	chain c {
		type filter hook prerouting priority mangle;
		meta l4proto tcp tproxy to [::1]
		meta l4proto tcp tproxy to :80
		meta l4proto tcp tproxy to [fd00::1]:80
	}
}
`,
  },
  // igmp: nft keeps the ip match before it in every family (`meta nfproto ipv4 igmp type ...`), its group is a number
  {
    table: 'ip rt_ig1',
    text: `table ip rt_ig1 {
	chain c {
		igmp type membership-query accept
		igmp group 5 accept
		ip protocol igmp igmp mrt 1 accept
	}
}
`,
  },
  {
    table: 'inet rt_ig2',
    text: `table inet rt_ig2 {
	chain c {
		igmp type membership-query accept
		meta nfproto ipv4 meta l4proto igmp igmp mrt 2 accept
		ip protocol igmp igmp mrt 3 accept
	}
}
`,
  },
  {
    table: 'bridge rt_ig3',
    text: `table bridge rt_ig3 {
	chain c {
		igmp type membership-query accept
		ether type ip igmp mrt 1 accept
	}
}
`,
  },
  {
    table: 'netdev rt_ig4',
    text: `table netdev rt_ig4 {
	chain c {
		igmp type membership-query accept
	}
}
`,
  },
  // marks in interval sets and maps, typeof and type, alone and concatenated (big-endian, never swapped twice)
  {
    table: 'inet rt_mi',
    text: `table inet rt_mi {
	set a { typeof meta mark; flags interval; elements = { 0x00000001-0x00000005, 0x00000100 } }
	set b { typeof ct mark; flags interval; elements = { 0x00000001-0x00000005 } }
	set c { typeof ct mark . ip saddr; flags interval; elements = { 0x00000001-0x00000005 . 127.0.0.1 } }
	set d { type mark . ipv4_addr; flags interval; elements = { 0x00000001-0x00000005 . 127.0.0.0/8 } }
	set e { type mark; flags interval; elements = { 0x00000001-0x00000005 } }
	map f { typeof meta mark : ip daddr; flags interval; elements = { 0x00000001-0x00000005 : 127.0.0.1 } }
	map g { type mark : mark; flags interval; elements = { 0x00000001-0x00000005 : 0x00000007 } }
	chain c { meta mark { 0x00000001-0x00000005, 0x00000010 } accept; ct mark . ip saddr { 0x00000001-0x00000005 . 127.0.0.1 } accept; meta mark vmap { 0x00000001-0x00000005 : accept }; ip daddr set meta mark map { 0x00000001-0x00000003 : 127.0.0.1 }; }
}
`,
  },
  // several flags compared whole (tcp flags as one number, ct flags or'ed), under a mask of every bit
  // (dropped), in a range (numbers in text, names in JSON); `ct state == a | b` is in
  // test/live/nft-format-fix.test.ts (nft's listing of it reads back as `ct state a,b`)
  {
    table: 'inet rt_flagwhole',
    text: `table inet rt_flagwhole {
	chain c {
		tcp flags == syn | ack accept
		tcp flags != syn | ack accept
		ct state != established | related accept
		tcp flags == fin | psh | urg drop
		tcp flags & (fin | syn | rst | psh | ack | urg | ecn | cwr) == fin | syn | rst | psh | ack | urg | ecn | cwr drop
		tcp flags & (fin | syn | rst | psh | ack | urg | ecn | cwr) == syn drop
		tcp flags & (fin | syn | rst | psh | ack | urg | ecn | cwr) != syn drop
		tcp flags & (fin | syn | rst | psh | ack | urg | ecn | cwr) == 0x0 drop
		tcp flags > syn | ack accept
		tcp flags 0x40-0x80 accept
	}
}
`,
  },
  // neighbouring fields nft merges into one load: one match each; the icmp fields of the type matched
  // (`icmp id`, `icmp sequence` after an echo type, never `icmp gateway`)
  {
    table: 'ip rt_merged',
    text: `table ip rt_merged {
	chain c {
		icmp id 5 icmp sequence 1 accept
		icmp type echo-reply icmp id 5 icmp sequence 1 accept
		icmp type echo-request icmp id 1 accept
		icmp type redirect icmp gateway 1 accept
		icmp type destination-unreachable icmp mtu 1500 accept
		icmp type 8 icmp code 0 accept
		tcp sport 1 tcp dport 2 accept
		udp sport 1 udp dport 2 accept
		ip saddr 127.0.0.1 ip daddr 127.0.0.2 accept
	}
}
`,
  },
  {
    table: 'ip6 rt_merged6',
    text: `table ip6 rt_merged6 {
	chain c {
		icmpv6 id 5 icmpv6 sequence 1 accept
		icmpv6 type echo-request icmpv6 id 5 icmpv6 sequence 1 accept
		icmpv6 type packet-too-big icmpv6 mtu 1280 accept
		icmpv6 type mld-listener-query icmpv6 max-delay 5 accept
		icmpv6 type echo-reply icmpv6 id 5 accept
	}
}
`,
  },
  // integer parts of an anonymous concatenation (`ip ttl`, `meta length`): by the field's size and byte order,
  // not as a padded 4-byte hex number
  {
    table: 'inet rt_concatint',
    text: `table inet rt_concatint {
	chain c {
		ip ttl . ip protocol { 64 . tcp } accept
		ip id . ip saddr { 5 . 127.0.0.1 } accept
		tcp window . tcp dport { 1024 . 22 } accept
		meta length . ip saddr { 100 . 127.0.0.1 } accept
		meta cpu . ip saddr { 1 . 127.0.0.1 } accept
		ip length . ip saddr { 1500 . 127.0.0.1 } accept
		udp length . udp dport { 8 . 53 } accept
		ip6 hoplimit . ip6 saddr { 255 . fd00::1 } accept
		ip ttl . ip saddr { 1-64 . 127.0.0.1 } accept
		ip saddr . ip ttl { 127.0.0.1 . 64 } accept
		tcp sequence . tcp dport { 7 . 22 } accept
		ip ttl . tcp dport vmap { 64 . 22 : accept }
	}
}
`,
  },
  // protocol numbers by netbase's names as nft prints them (`ipencap`, `ipv6-frag`), unnamed ones as numbers
  {
    table: 'inet rt_protonames',
    text: `table inet rt_protonames {
	set p {
		type inet_proto
		elements = { 0, 41, 112, 143 }
	}
	chain c {
		meta l4proto 0 accept
		meta l4proto 4 accept
		meta l4proto 41 accept
		meta l4proto 44 accept
		meta l4proto 46 accept
		meta l4proto 59 accept
		meta l4proto 89 accept
		meta l4proto 103 accept
		meta l4proto 115 accept
		meta l4proto 143 accept
		meta l4proto 253 accept
		ip protocol 94 accept
		ip6 nexthdr 60 accept
		meta l4proto { 4, 41, 47, 200 } accept
		ct protocol 41 accept
		meta l4proto vmap { 108 : accept, 50 : drop }
	}
}
`,
  },
  // a mark under a mask of leading ones is nft's prefix (`meta mark 0x00010000/16`), a full mask the value alone
  {
    table: 'inet rt_markprefix',
    text: `table inet rt_markprefix {
	chain c {
		meta mark & 0xffff0000 == 0x00010000 accept
		meta mark & 0xff000000 == 0x00000000 accept
		meta mark & 0xfffffff0 != 0x00000010 accept
		meta mark & 0x80000000 == 0x80000000 accept
		ct mark & 0xffff0000 == 0x00020000 accept
		ct mark & 0xff000000 != 0x01000000 accept
		socket mark & 0xffff0000 == 0x00010000 accept
		meta mark & 0xffffffff == 0x00000005 accept
		meta mark & 0xfffffffe == 0x00000002 accept
		meta mark & 0x00000000 == 0x00000000 accept
		meta mark & 0x0000ffff == 0x00000001 accept
		meta mark & 0xffff0000 < 0x00010000 accept
	}
}
`,
  },
  // `log ... snaplen 0` kept; a ct address prefix (its JSON's left side); numgen/hash `mod` and `ct count`
  // past 2^31 - 1 (nft -j writes them signed)
  {
    table: 'ip rt_misc',
    text: `table ip rt_misc {
	chain c {
		log snaplen 0 group 1
		log group 2 snaplen 64 queue-threshold 3
		ct original ip saddr & 255.255.0.0 == 169.254.0.0 accept
		ct original saddr & 255.255.255.0 != 127.0.0.0 accept
		meta mark set numgen inc mod 4294967295
		meta mark set jhash ip saddr mod 2147483648 seed 0xffffffff offset 2147483647
		meta mark set symhash mod 2147483649
		ct count 4294967295
		ct count over 2147483648
		meta mark set numgen random mod 2147483647
	}
}
`,
  },
  // a statement between a protocol match and the field that needs it: nft keeps the match
  {
    table: 'ip rt_depstmt',
    text: `table ip rt_depstmt {
	chain c {
		meta l4proto tcp counter packets 0 bytes 0 tcp dport 22
		meta l4proto tcp meta mark set 0x00000001 tcp dport 22
		meta l4proto tcp tproxy to :80 tcp flags ecn
		meta l4proto udp udp dport 53 counter packets 0 bytes 0
		icmp type echo-request counter packets 0 bytes 0 icmp id 1
	}
}
`,
  },
  // set and map types nft names (icmpx_code, realm, uid, gid, devgroup, mh_type, boolean, time, day), by value
  // and by interval; typeof concatenations of `th` and `vlan` fields; meta keys of those types
  {
    table: 'inet rt_types',
    text: `table inet rt_types {
	set icmpx {
		type icmpx_code
		elements = { no-route,
			     port-unreachable,
			     host-unreachable,
			     admin-prohibited,
			     7 }
	}

	set realms {
		type realm
		elements = { "cosmos",
			     1,
			     5 }
	}

	set realmr {
		type realm
		flags interval
		elements = { "cosmos",
			     3-7 }
	}

	set uids {
		type uid
		elements = { 0, 1, 2, 3, 4,
			     5, 1000 }
	}

	set uidr {
		type uid
		flags interval
		elements = { 0-100, 1000 }
	}

	set gids {
		type gid
		elements = { 0, 100 }
	}

	set groups {
		type devgroup
		elements = { "default",
			     3 }
	}

	set mht {
		type mh_type
		elements = { binding-refresh-request,
			     binding-update,
			     home-agent-switch-message,
			     13 }
	}

	set bools {
		type boolean
		elements = { missing,
			     exists }
	}

	set times {
		type time
		elements = { 30s,
			     1h,
			     1d2h3m4s5ms }
	}

	map um {
		type uid : realm
		elements = { 5 : 7, 6 : "cosmos" }
	}

	map gm {
		type devgroup : gid
		elements = { "default" : 0,
			     4 : 1 }
	}

	set tof {
		typeof iifname . meta l4proto . th dport
		elements = { "lo" . tcp . 22,
			     "ab" . udp . 53 }
	}

	set ctv {
		typeof ct zone . vlan id
		elements = { 1 . 5,
			     65535 . 4095 }
	}

	set vv {
		typeof vlan id . vlan pcp
		elements = { 5 . 1 }
	}

	chain c {
		iifgroup "default" accept
		oifgroup 7 accept
		iifgroup @groups accept
		meta rtclassid "cosmos" accept
		meta rtclassid 9 accept
		meta rtclassid @realms accept
		meta sdif "lo" accept
		meta sdifname "lo" accept
		meta day "Wednesday" accept
		meta day { "Sunday", "Saturday" } accept
		meta ipsec exists accept
		meta ipsec missing drop
		meta cgroup 1048577 accept
		meta skuid @uids accept
		meta skgid @gids accept
		iifname . meta l4proto . th dport @tof accept
	}
}
`,
  },
  // set statements: a concatenated key, an element statement (limit, counter), a map value (nft -j writes that statement as its text)
  {
    table: 'inet rt_dynset',
    text: `table inet rt_dynset {
	set dyn {
		type ipv4_addr
		size 65535
		flags dynamic
	}

	set dyn6 {
		type ipv6_addr . inet_service
		size 65535
		flags dynamic
	}

	map dm {
		type ipv4_addr : mark
		size 65535
		flags dynamic
	}

	chain c {
		update @dyn { ip saddr limit rate 10/second }
		add @dyn6 { ip6 saddr . tcp dport counter }
		update @dm { ip saddr : 0x00000005 }
	}
}
`,
  },
  // set statements with timeouts, quota, ct count, counter, and map values that are constants or fields
  {
    table: 'ip rt_dynset4',
    text: `table ip rt_dynset4 {
	set dyn {
		type ipv4_addr
		size 65535
		flags dynamic,timeout
		timeout 1m
	}

	set dq {
		type ipv4_addr . inet_service
		size 65535
		flags dynamic,timeout
	}

	set dc {
		type ipv4_addr
		size 65535
		flags dynamic
	}

	map dm {
		type ipv4_addr : mark
		size 65535
		flags dynamic,timeout
	}

	map dv {
		type ipv4_addr . ipv4_addr : inet_service
		size 65535
		flags dynamic
	}

	chain c {
		update @dyn { ip saddr timeout 10s limit rate over 1/minute burst 3 packets }
		add @dyn { ip daddr quota over 100 mbytes } drop
		add @dc { ip daddr ct count over 5 } drop
		add @dq { ip saddr . tcp dport timeout 5s counter } accept
		update @dm { ip saddr timeout 30s : 0x00000007 }
		update @dm { ip saddr : meta mark }
		add @dv { ip saddr . ip daddr : 53 }
		add @dv { ip saddr . ip daddr : udp dport }
		limit rate 10/second
		quota 100 mbytes
	}
}
`,
  },
  // fields of IPv6 extension headers, IPv4 and TCP options nft names, their presence, a TCP option written
  {
    table: 'inet rt_exthdr',
    text: `table inet rt_exthdr {
	chain c {
		frag id 5 drop
		srh tag 5 accept
		srh last-entry 1 accept
		rt type 4 accept
		rt seg-left 0 accept
		mh type binding-update accept
		mh type binding-update accept
		dst nexthdr tcp accept
		hbh nexthdr udp accept
		ip option rr ptr 4 accept
		ip option lsrr ptr 4 accept
		ip option rr exists accept
		tcp option 254 exists accept
		tcp option maxseg size set rt mtu
		tcp option maxseg size set 1360
		tcp option sack-perm exists accept
		tcp option maxseg size 1360 accept
		hbh hdrlength 2 accept
		rt nexthdr tcp accept
		rt hdrlength 3 accept
		srh flags 1 accept
		frag nexthdr udp accept
		frag reserved 1 accept
		frag id { 1, 2 } accept
		mh checksum 5 accept
		mh reserved 0 accept
		mh type { home-test, binding-update } accept
		dst hdrlength 1 accept
		exthdr frag exists accept
		ip option ssrr addr 2130706433 accept
		ip option lsrr type 131 accept
		ip option rr length 7 accept
		ip option ra value 0 accept
		ip option ra exists accept
		tcp option window count 7 accept
		tcp option timestamp tsval 5 accept
		tcp option sack left 1 accept
		tcp option maxseg length 4 accept
		tcp option 200 exists drop
		tcp option maxseg size set tcp option maxseg size
	}
}
`,
  },
  // the routing expression: rt classid, ip/ip6 nexthop, mtu, ipsec; tcp option maxseg size set rt mtu
  {
    table: 'inet rt_route',
    text: `table inet rt_route {
	chain c {
		rt classid 5 accept
		rt classid "cosmos" accept
		rt ip nexthop 127.0.0.1 accept
		rt ip6 nexthop fd00::1 accept
		rt mtu 1400 accept
		rt ipsec exists accept
		rt ipsec missing drop
		tcp option maxseg size set rt mtu
		tcp flags syn tcp option maxseg size set rt mtu
	}
}
`,
  },
  // ct zone set with a direction, ct label set
  {
    table: 'inet rt_ctset',
    text: `table inet rt_ctset {
	chain c {
		ct original zone set 3
		ct reply zone set 4
		ct zone set 5
		ct label set 1
		ct label set 127
		ct original zone 3 accept
	}
}
`,
  },
  // ct zone set with a direction, ct label set
  {
    table: 'ip rt_ctzone',
    text: `table ip rt_ctzone {
	chain c {
		ct original zone set 3
		ct reply zone set ct zone
		ct zone set ip saddr map { 127.0.0.1 : 5 }
		ct original zone set ip saddr map { 127.0.0.1 : 5 }
		ct mark set 0x00000005
		ct label set 0
	}
}
`,
  },
  // bit fields of an extension header and a TCP option (frag more-fragments, frag-off, tcp option mptcp subtype)
  {
    table: 'inet rt_bits',
    text: `table inet rt_bits {
	chain c {
		ip6 nexthdr ipv6-frag frag more-fragments 1 accept
		frag more-fragments 0 drop
		frag frag-off 5 drop
		frag frag-off != 7 drop
		tcp option mptcp subtype 1 accept
		tcp option mptcp subtype 15 accept
		frag more-fragments 1 frag id 3 accept
	}
}
`,
  },
  // bit fields as set, verdict map and map keys (the set holds the bits unshifted)
  {
    table: 'inet rt_bitsets',
    text: `table inet rt_bitsets {
	chain c {
		ip dscp { cs1, af41 } accept
		ip dscp != { cs1, af41 } accept
		ip dscp vmap { cs1 : accept, ef : drop }
		meta mark set ip dscp map { cs1 : 0x00000001 }
		ip6 dscp { 0x05, cs1 } accept
		frag frag-off { 1, 2 } accept
		tcp option mptcp subtype { 1, 3 } accept
		vlan id { 1, 4095 } accept
		ct mark set ip dscp map { cs1 : 0x00000001 }
	}
}
`,
  },
  // the vlan header's type in inet: nft keeps `vlan type arp` with no match after it, and `ether type 8021q`
  // before `vlan type` (issue 21: these printed raw, though nft's text rebuilds the same bytes)
  {
    table: 'inet rt_vlantype',
    text: `table inet rt_vlantype {
	chain c {
		vlan id 5 vlan type arp accept
		ether type 8021q vlan type ip accept
		ether type 8021q vlan type arp accept
		vlan id 5 vlan type ip accept
		ether type arp accept
	}
}
`,
  },
  // ranges of types nft names: numbers in its text, names in its JSON (protocols: numbers)
  {
    table: 'inet rt_ranges',
    text: `table inet rt_ranges {
	set dsi {
		type dscp
		flags interval
		elements = { 0x08-0x18 }
	}

	set ici {
		type icmp_type
		flags interval
		elements = { 0-3 }
	}

	set pri {
		type inet_proto
		flags interval
		elements = { 6-17 }
	}

	chain c {
		icmp type 0-3 accept
		ip protocol 6-17 accept
	}
}
`,
  },
  // ip6 dscp in typeof sets and maps, alone and concatenated: its value is one byte (its load two)
  {
    table: 'ip6 rt_dscpcat',
    text: `table ip6 rt_dscpcat {
	set s {
		typeof ip6 saddr . ip6 dscp
		elements = { fd00::2 . cs1,
			     fd00::1 . af11 }
	}

	set d {
		typeof ip6 dscp
		elements = { af11,
			     ef }
	}

	set i {
		typeof ip6 dscp . tcp dport
		flags interval
		elements = { cs1 . 22-23,
			     af41 . 80 }
	}

	map m {
		typeof meta mark : ip6 dscp . tcp dport
		elements = { 0x00000001 : af11 . 22 }
	}

	map v {
		typeof ip6 dscp . tcp dport : verdict
		elements = { cs1 . 22 : accept }
	}
}
`,
  },
  // maps of interval values (`: interval ipv4_addr`, nft's NAT ranges): prefixes, ranges, parts of one value
  {
    table: 'ip rt_ivdata',
    text: `table ip rt_ivdata {
	map g {
		type ipv4_addr : interval ipv4_addr . inet_service
		flags interval
		elements = { 127.0.0.0/8 : 169.254.0.1-169.254.0.5 . 80-90 }
	}

	map n {
		type ipv4_addr : interval ipv4_addr
		elements = { 127.0.0.1 : 169.254.0.0/24, 127.0.0.2 : 169.254.0.1-169.254.0.5 }
	}

	map k {
		type inet_service : interval ipv4_addr . inet_service
		elements = { 80 : 169.254.0.1-169.254.0.2 . 1-1023 }
	}

	map o {
		type ipv4_addr : interval ipv4_addr
		flags interval
		elements = { 127.0.0.0/8 : 169.254.0.1-169.254.0.5 }
	}
}
`,
  },
  // a map of IPv6 interval values
  {
    table: 'ip6 rt_ivdata6',
    text: `table ip6 rt_ivdata6 {
	map f {
		type ipv6_addr : interval ipv6_addr
		flags interval
		elements = { fd00::/16 : fd01::1-fd01::5 }
	}
}
`,
  },
  // ranges of types nft names print as numbers (`meta l4proto 6-17`, `ether type 0x0800-0x86dd`), `!=` too; a range, set or
  // verdict map on vlan type leaves out `ether type 8021q`
  {
    table: 'netdev rt_symrange',
    text: `table netdev rt_symrange {
	chain c {
		ether type 0x0800-0x86dd accept
		ether type != 0x0800-0x86dd drop
		vlan type 0x0800-0x86dd accept
		vlan type != 0x0800-0x86dd accept
		vlan type { ip, ip6 } accept
		vlan type vmap { ip : accept }
		meta l4proto 6-17 accept
		meta l4proto { 1-6, udp } accept
		meta pkttype 0-2 accept
		meta protocol 0x0800-0x86dd accept
		icmp type 0-8 accept
		icmp type != 0-8 drop
		icmpv6 type 128-129 accept
		arp operation 1-2 accept
		ip protocol != 6-17 drop
	}
}
`,
  },
  // interval sets and maps of types nft names: ranges as numbers, single values as names
  {
    table: 'inet rt_symsets',
    text: `table inet rt_symsets {
	set et {
		type ether_type
		flags interval
		elements = { 0x0800-0x86dd }
	}

	set pk {
		type pkt_type
		flags interval
		elements = { 0-2 }
	}

	set nf {
		type nf_proto
		flags interval
		elements = { 2-10 }
	}

	set cd {
		type ct_dir
		flags interval
		elements = { 0-1 }
	}

	set it {
		type iface_type
		flags interval
		elements = { 1-772 }
	}

	set ec {
		type ecn
		flags interval
		elements = { 0x0-0x2 }
	}

	set ao {
		type arp_op
		flags interval
		elements = { 1-2 }
	}

	set i6 {
		type icmpv6_type
		flags interval
		elements = { 128-129,
			     nd-neighbor-solicit }
	}

	set fa {
		type fib_addrtype
		flags interval
		elements = { 1-3 }
	}

	set ig {
		type igmp_type
		flags interval
		elements = { 17-22 }
	}

	set pp {
		type ipv4_addr . inet_proto
		flags interval
		elements = { 127.0.0.1 . 6-17,
			     127.0.0.2 . icmp }
	}

	map pm {
		type inet_proto : verdict
		flags interval
		elements = { icmp : drop, 6-17 : accept }
	}

	chain c {
		meta l4proto vmap @pm
		ct direction 0-1 accept
	}
}
`,
  },
  // NAT to a map of address intervals: nft names the family in any table (`snat ip to ip saddr map @n`)
  {
    table: 'ip rt_nativ',
    text: `table ip rt_nativ {
	map n {
		type ipv4_addr : interval ipv4_addr
		elements = { 127.0.0.1 : 169.254.0.1-169.254.0.5 }
	}

	chain c {
		type nat hook postrouting priority srcnat; policy accept;
		snat ip to ip saddr map @n
		snat ip to ip saddr map { 127.0.0.2 : 169.254.0.1-169.254.0.3 }
		snat ip prefix to ip saddr map { 127.0.0.0/8 : 169.254.0.0/16 }
	}
}
`,
  },
  // the same in ip6
  {
    table: 'ip6 rt_nativ6',
    text: `table ip6 rt_nativ6 {
	map n {
		type ipv6_addr : interval ipv6_addr
		elements = { fd00::1 : fd01::1-fd01::5 }
	}

	chain c {
		type nat hook prerouting priority dstnat; policy accept;
		meta l4proto tcp dnat ip6 to ip6 saddr map @n
	}
}
`,
  },
  // the same in inet
  {
    table: 'inet rt_nativ',
    text: `table inet rt_nativ {
	map n {
		type ipv4_addr : interval ipv4_addr
		elements = { 127.0.0.1 : 169.254.0.1-169.254.0.5 }
	}

	chain c {
		type nat hook prerouting priority dstnat; policy accept;
		meta l4proto tcp dnat ip to ip saddr map @n
	}
}
`,
  },
  // a map keyed by vlan id, and a range, set or verdict map on vlan type: nft leaves out `ether type 8021q`
  {
    table: 'bridge rt_vlanmap',
    text: `table bridge rt_vlanmap {
	map m8 {
		typeof vlan id : meta mark
		elements = { 5 : 0x00000001 }
	}

	chain c {
		meta mark set vlan id map @m8
		meta priority set vlan id map { 5 : 1:2 }
		vlan type 0x0800-0x86dd accept
		vlan type { ip, ip6 } accept
		vlan type vmap { ip : accept }
	}
}
`,
  },
  // QinQ: vlan headers stacked (`ether type 8021ad`, `vlan type 8021q`), each vlan field naming the innermost
  // header so far, as nft 1.0.6 does; `ether type 8021q` left out before a vlan field, the other vlan types kept;
  // `vlan type ip` / `vlan type arp` left out before a field of that header (issue 21: these printed as @ll words)
  {
    table: 'bridge rt_qinq',
    text: `table bridge rt_qinq {
	chain c {
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 ip saddr 169.254.0.1 accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 vlan pcp 3 accept
		ether type 8021ad vlan type 8021q vlan id 6 accept
		ether type 8021ad vlan id 5 accept
		vlan id 5 vlan type 8021q vlan id 6 accept
		vlan id 5 vlan type 8021ad vlan id 6 accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 vlan type 8021q vlan id 7 accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 vlan type ip accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 arp operation request accept
		ether saddr 00:11:22:33:44:55 ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 ip protocol tcp tcp dport 22 accept
		ether type 8021ad vlan id 5 ip saddr 169.254.0.1 accept
		ether type 8021ad vlan type 8021q vlan pcp 2 vlan dei 1 accept
		ether type 8021ad vlan type 8021q vlan id { 1, 2 } accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id != 6 accept
		ether type 8021ad vlan id 5 vlan type 8021q meta l4proto tcp accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 ip saddr 169.254.0.1 meta l4proto tcp accept
	}
}
`,
  },
  {
    table: 'netdev rt_qinq',
    text: `table netdev rt_qinq {
	chain c {
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 accept
		vlan id 5 vlan type 8021q vlan id 6 ip daddr 169.254.0.2 accept
	}
}
`,
  },
  {
    table: 'inet rt_qinq',
    text: `table inet rt_qinq {
	chain c {
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 accept
		ether type 8021ad vlan id 5 vlan type 8021q vlan id 6 vlan type ip accept
	}
}
`,
  },
  // set statements on link-layer keys in netdev: nft leaves out `meta iiftype ether`
  {
    table: 'netdev rt_dynl2',
    text: `table netdev rt_dynl2 {
	set b {
		type ether_addr
		size 65535
		flags dynamic
	}

	set g {
		type ether_addr . mark
		size 65535
		flags dynamic
	}

	chain c {
		add @b { ether daddr }
		add @g { ether daddr . meta mark }
	}
}
`,
  },
  // conntrack timeout and expectation objects, synproxy objects and statements, and the statements that apply them
  {
    table: 'inet rt_ctobj',
    text: `table inet rt_ctobj {
	ct timeout t1 {
		comment "hi"
		protocol tcp
		l3proto ip6
		policy = { syn_sent : 1, syn_recv : 2, established : 3, fin_wait : 4, close_wait : 5, last_ack : 6, time_wait : 7, close : 8, syn_sent2 : 9, retrans : 10, unack : 11 }
	}

	ct timeout t2 {
		protocol tcp
		l3proto ip
		policy = { established : 100, close : 5 }
	}

	ct timeout u1 {
		protocol udp
		l3proto ip
		policy = { unreplied : 1, replied : 2 }
	}

	ct expectation e0 {
		protocol udp
		dport 5060
		timeout 1m30s
		size 255
		l3proto ip6
	}

	ct expectation e1 {
		protocol tcp
		dport 21
		timeout 1d2h3m4s5ms
		size 1
		l3proto ip
	}

	synproxy s0 {
		mss 1460
		wscale 0
	}

	synproxy s2 {
		mss 536
		wscale 2
		 sack-perm
	}

	synproxy s3 {
		comment "c"
		mss 536
		wscale 2
		timestamp 
	}

	synproxy s4 {
		mss 1
		wscale 14
		timestamp sack-perm
	}

	chain c {
		synproxy
		synproxy mss 1400 wscale 0
		synproxy mss 0 wscale 3
		synproxy sack-perm
		synproxy timestamp sack-perm
		synproxy mss 1460 wscale 7 timestamp sack-perm
		tcp dport 80 ct timeout set "t2"
		ct timeout set "t1"
		ct expectation set "e0"
		tcp dport 443 synproxy name "s4"
		synproxy name tcp dport map { 80 : "s0", 443 : "s4" }
		ct timeout set tcp dport map { 80 : "t2" }
	}
}
`,
  },
  // TCP options nft names by kind (eol, nop, md5sig, fastopen) and those it does not
  {
    table: 'ip rt_tcpopt',
    text: `table ip rt_tcpopt {
	chain c {
		tcp option eol exists accept
		tcp option nop exists accept
		tcp option md5sig exists accept
		tcp option fastopen exists accept
		tcp option fastopen length 2 accept
		tcp option md5sig length 18 accept
		tcp option 6 exists accept
		tcp option 34 exists
	}
}
`,
  },
  // NAT to what a map gives: an address and a port (a concatenation), a range of addresses, ranges of both
  {
    table: 'ip rt_natmap',
    text: `table ip rt_natmap {
	map m {
		type ipv4_addr : interval ipv4_addr . inet_service
		flags interval
		elements = { 127.0.0.0/8 : 169.254.0.1-169.254.0.5 . 80-90 }
	}

	map n {
		type ipv4_addr : interval ipv4_addr
		flags interval
		elements = { 127.0.0.1 : 169.254.0.1-169.254.0.5 }
	}

	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		meta l4proto tcp dnat ip to ip saddr map @m
		meta l4proto tcp dnat ip to ip saddr map { 127.0.0.0/8 : 169.254.0.1-169.254.0.5 . 80-90 }
		dnat ip to ip daddr . tcp dport map { 127.0.0.1 . 80 : 169.254.0.1 . 8080 }
		dnat ip to tcp dport map { 80 : 127.0.0.1 . 8080 }
		meta l4proto tcp dnat to 169.254.0.1-169.254.0.5:80-90
		dnat ip to ip saddr . tcp dport map { 127.0.0.1 . 80 : 169.254.0.1-169.254.0.5 . 80-90 }
	}

	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		snat ip to ip saddr map @n
		snat ip prefix to ip saddr map { 127.0.0.0/8 : 169.254.0.0/16 }
		snat ip to ip saddr map { 127.0.0.0/8 : 169.254.0.1-169.254.0.9 }
		snat ip to ip saddr . udp sport map { 127.0.0.1 . 53 : 169.254.0.1 . 5353 }
		snat to 169.254.0.1-169.254.0.5
		meta l4proto tcp masquerade to :1024-2048
	}
}
`,
  },
  {
    table: 'ip6 rt_natmap6',
    text: `table ip6 rt_natmap6 {
	map m {
		type ipv6_addr : interval ipv6_addr . inet_service
		flags interval
		elements = { fd00::/16 : fd01::1-fd01::5 . 80-90 }
	}

	map n {
		type ipv6_addr : interval ipv6_addr
		flags interval
		elements = { fd00::1 : fd01::1-fd01::5 }
	}

	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		dnat ip6 to ip6 daddr . tcp dport map { fd00::1 . 80 : fd01::1 . 8080 }
		dnat ip6 to ip6 saddr map @n
		dnat to ip6 saddr map { fd00::1 : fd01::1 }
	}
}
`,
  },
  {
    table: 'inet rt_natmapi',
    text: `table inet rt_natmapi {
	map m {
		type ipv4_addr : interval ipv4_addr . inet_service
		flags interval
		elements = { 127.0.0.0/8 : 169.254.0.1-169.254.0.5 . 80-90 }
	}

	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		meta l4proto tcp dnat ip to ip saddr map @m
		dnat ip to ip daddr . tcp dport map { 127.0.0.1 . 80 : 169.254.0.1 . 8080 }
		dnat ip6 to ip6 daddr . tcp dport map { fd00::1 . 80 : fd01::1 . 8080 }
	}
}
`,
  },
  // bit fields in ranges, order comparisons and typeof sets (`ip dscp @d`); marks shifted, and masked with bits set
  {
    table: 'inet rt_bitfields',
    text: `table inet rt_bitfields {
	set d {
		typeof ip dscp
		elements = { cs1,
			     af41 }
	}

	set d6 {
		typeof ip6 dscp
		elements = { cs1,
			     ef }
	}

	chain c {
		ip dscp @d accept
		ip6 dscp @d6 accept
		ip dscp 0x08-0x10 accept
		ip dscp != 0x08-0x10 accept
		ip dscp > cs1 accept
		ip dscp <= af41 accept
		ip ecn 0x0-0x2 accept
		ip hdrlength > 5 accept
		ip hdrlength 5-7 accept
		ip6 dscp 0x08-0x10 accept
		ip6 flowlabel 1-100 accept
		ip6 flowlabel > 100 accept
		tcp doff > 5 accept
		vlan id 5-10 accept
		ip dscp vmap { cs1 : accept, ef : drop }
		ip6 dscp vmap { cs1 : accept }
		meta mark set ct mark >> 8
		meta mark set ct mark << 8
		ct mark set meta mark << 16
		ct mark set ct mark >> 4 & 0x000000ff
		meta mark set ct mark & 0xffff0001 | 0x00000001
	}
}
`,
  },
  {
    table: 'ip rt_markops',
    text: `table ip rt_markops {
	chain c {
		meta mark set meta mark & 0x0000ff11 | 0x00000011
		ct mark set ct mark & 0x00ffff00 | 0x00ff0000
		meta mark set ct mark >> 8 & 0x000000ff
		meta mark set meta mark & 0x0000ffff
		meta mark set meta mark | 0x00000010
		meta mark set meta mark ^ 0x00000003
	}
}
`,
  },
  // meta hour, day and time: matches, ranges, sets (nft prints local time; synplug follows the same TZ)
  {
    table: 'inet rt_time',
    text: `table inet rt_time {
	set h {
		typeof meta hour
		elements = { "10:00",
			     "17:30:05" }
	}

	set dd {
		typeof meta day
		elements = { "Sunday",
			     "Monday" }
	}

	chain c {
		meta hour "10:00"-"12:00" accept
		meta hour "17:00" accept
		meta hour "17:00:01" accept
		meta day "Monday" accept
		meta day { "Monday", "Friday" } accept
		meta time "2024-01-01 00:00:00" accept
		meta time "2024-01-01 00:00:00"-"2024-06-01 00:00:00" accept
		meta hour != "10:00"-"12:00" drop
		meta hour < "06:00" drop
		meta hour { "08:00", "09:00" } accept
		meta hour @h accept
		meta day @dd accept
		meta time > "2030-01-01 12:34:56" drop
	}
}
`,
  },
  // conntrack labels: a label's bit set, a label compared whole (!=), set
  {
    table: 'inet rt_ctlabel',
    text: `table inet rt_ctlabel {
	chain c {
		ct label 1 accept
		ct label 127 accept
		ct label set 5
		ct label != 3 accept
	}
}
`,
  },
  // jhash of concatenations (`jhash ip saddr . tcp dport`), in statements, maps and verdict maps
  {
    table: 'ip rt_jhash',
    text: `table ip rt_jhash {
	chain c {
		meta mark set jhash ip saddr . tcp dport mod 16 seed 0x5 offset 10
		meta mark set jhash ip saddr . ip daddr mod 16
		meta mark set jhash ip saddr . ip daddr . ip protocol mod 16
		meta mark set jhash meta mark . ip saddr mod 16
		jhash ip saddr . ip daddr mod 4 vmap { 0 : accept, 1 : drop, 2 : accept, 3 : drop }
		dnat to jhash ip saddr . tcp sport mod 2 map { 0 : 127.0.0.1, 1 : 127.0.0.2 }
		meta mark set jhash ip saddr mod 4
		meta mark set jhash ct mark mod 4
		meta mark set jhash ip daddr . ct mark mod 4
		meta mark set jhash tcp sport . tcp dport mod 16
		meta mark set symhash mod 2
	}
}
`,
  },
  {
    table: 'inet rt_jhashi',
    text: `table inet rt_jhashi {
	chain c {
		meta mark set jhash ip saddr . tcp dport mod 16 seed 0x5 offset 10
		meta mark set jhash ip6 saddr . ip6 daddr mod 16
		meta mark set jhash tcp sport . tcp dport mod 16
		meta mark set symhash mod 2
	}
}
`,
  },
  {
    table: 'bridge rt_jhashb',
    text: `table bridge rt_jhashb {
	chain c {
		meta mark set jhash ether saddr . ether daddr mod 16
	}
}
`,
  },
  // addresses and marks under a mask, looked up in sets, maps and verdict maps (`ip daddr & 255.255.255.0 == { ... }`)
  {
    table: 'ip rt_maskset',
    text: `table ip rt_maskset {
	set s {
		type ipv4_addr
		elements = { 127.0.0.0 }
	}

	chain c {
		ip daddr & 255.255.255.0 == { 127.0.0.0, 169.254.0.0 } accept
		ip daddr & 255.255.255.0 != { 127.0.0.0, 169.254.0.0 } accept
		ip saddr & 255.255.0.0 == @s accept
		ct mark & 0x0000ff00 == { 0x00000100, 0x00000200 } accept
		ct mark & 0x000000ff vmap { 0x00000001 : accept }
		meta mark & 0x000000ff vmap { 0x00000001 : accept, 0x00000002 : drop }
		meta mark set ct mark & 0x000000ff map { 0x00000001 : 0x00000002 }
	}
}
`,
  },
  {
    table: 'inet rt_maskset6',
    text: `table inet rt_maskset6 {
	chain c {
		ip6 daddr & ffff:ffff:: == { fd00::, fd01:: } accept
		ip daddr 127.0.0.0/24 accept
		meta mark & 0x0000ff00 != 0x00000100 accept
		ct mark & 0x0000000f vmap { 0x00000001 : accept }
	}
}
`,
  },
  // meta priority in ranges, interval sets and order comparisons
  {
    table: 'inet rt_prio',
    text: `table inet rt_prio {
	chain c {
		meta priority 1:1-1:5 accept
		meta priority != 1:1-1:5 accept
		meta priority { 1:1-1:5, 2:3 } accept
		meta priority > 1:1 accept
		meta priority 1:1 accept
		meta priority set 1:2
	}
}
`,
  },
  // ct expiration compared, in ranges (nft prints those in whole seconds) and sets
  {
    table: 'inet rt_expire',
    text: `table inet rt_expire {
	chain c {
		ct expiration < 1m accept
		ct expiration 10s-20s accept
		ct expiration > 30s accept
		ct expiration != 10s-3600s accept
		ct expiration 5s accept
		ct expiration { 10s-20s, 1m } accept
		ct expiration != 60s-120s accept
		ct expiration != 3600s-86400s accept
		ct expiration != 90s-100s accept
		ct expiration != 90s-3660s accept
		ct expiration 3600s-86400s accept
		ct expiration != 1h accept
		ct expiration != 1h accept
	}
}
`,
  },
  // meta iifkind/oifkind, ct id, ct event set, osf, sctp (fields and chunks), dccp type (issue #21)
  {
    table: 'inet rt_kinds',
    text: `table inet rt_kinds {
	chain c {
		meta iifkind "veth" accept
		meta oifkind != "bridge" accept
		meta iifkind { "veth", "vxlan" } accept
		meta iifkind "vet*" accept
		ct id 5 accept
		ct id != 7 accept
		ct id { 1, 2 } accept
		ct event set new,related,destroy
		ct event set label
		ct event set 0x800
		osf name "Linux" accept
		osf ttl loose name "Linux" drop
		osf ttl skip version "Linux:3.0" drop
		osf name { "Linux", "Windows" } accept
		meta nfproto ipv4 osf name "Linux" accept
		sctp dport 80 accept
		sctp sport 1-100 accept
		sctp vtag 5 accept
		sctp checksum 7 accept
		sctp chunk data exists accept
		sctp chunk init missing accept
		sctp chunk init num-inbound-streams 5 accept
		sctp chunk init-ack a-rwnd 100 accept
		sctp chunk sack num-dup-tsns 3 accept
		sctp chunk shutdown cum-tsn-ack 9 accept
		sctp chunk asconf seqno 4 accept
		sctp chunk forward-tsn new-cum-tsn 2 accept
		sctp chunk data type 0 accept
		sctp chunk data flags 3 accept
		sctp chunk data length 10 accept
		sctp chunk data ppid 7 accept
		sctp chunk cookie-echo exists accept
		sctp chunk heartbeat flags 1 accept
		meta l4proto sctp sctp chunk data exists accept
		ip protocol sctp sctp chunk init num-inbound-streams 5 accept
		dccp dport 80 accept
		dccp type request accept
		dccp type != ack accept
		dccp type { request, response } accept
		dccp type 3-5 accept
		meta l4proto dccp accept
	}
}
`,
  },
  // prefixes of Ethernet addresses (whole bytes: a short load; else masked), and conntrack addresses
  // compared in their first bytes
  {
    table: 'bridge rt_etherprefix',
    text: `table bridge rt_etherprefix {
	chain c {
		ether daddr 01:00:5e:00:00:00/24 drop
		ether saddr & ff:ff:f0:00:00:00 != 00:11:20:00:00:00 drop
		ether saddr 00:11:00:00:00:00/16 drop
		ether daddr & ff:ff:ff:80:00:00 == 01:00:5e:00:00:00 drop
		ether saddr 00:11:22:00:00:00/24 drop
		arp saddr ether 00:11:22:00:00:00/24 drop
	}
}
`,
  },
  {
    table: 'ip rt_ctprefix',
    text: `table ip rt_ctprefix {
	chain c {
		ct original ip saddr 127.0.0.0/8 accept
		ct reply ip daddr != 127.1.0.0/16 accept
		ct original ip saddr 127.0.0.0/9 accept
	}
}
`,
  },
  // a 1-byte protocol in an interval concatenation: nft puts a byteorder on it that converts nothing
  {
    table: 'inet rt_cc',
    text: `table inet rt_cc {
	set sc {
		type ipv4_addr . inet_proto . inet_service
		flags interval
		elements = { 127.0.0.0/8 . tcp . 1-100,
			     127.0.0.1 . udp . 53 }
	}

	set sd {
		type inet_proto . inet_service
		flags interval
		elements = { tcp . 1-100 }
	}

	chain c {
		ip saddr . meta l4proto . th dport @sc accept
		meta l4proto . th dport @sd accept
		meta l4proto . th dport { tcp . 1-100, udp . 53 } accept
		ip protocol . th dport { tcp . 1-100 } accept
	}
}
`,
  },
  // dup (ip, ip6: to an address, through a device; netdev: out of a device) and fwd (netdev)
  {
    table: 'ip rt_dup',
    text: `table ip rt_dup {
	chain o {
		type filter hook output priority filter; policy accept;
		dup to 127.0.0.2 device "lo"
		ip daddr 127.0.0.3 dup to 127.0.0.2
		dup to 127.0.0.4
	}
}
`,
  },
  {
    table: 'ip6 rt_dup6',
    text: `table ip6 rt_dup6 {
	chain o {
		type filter hook output priority filter; policy accept;
		dup to fd00::2 device "lo"
		dup to fd00::3
	}
}
`,
  },
  {
    table: 'netdev rt_fwd',
    text: `table netdev rt_fwd {
	chain i {
		type filter hook ingress device "lo" priority filter; policy accept;
		fwd to "lo"
		dup to "lo"
		fwd ip to 127.0.0.2 device "lo"
		fwd ip6 to fd00::2 device "lo"
		ip saddr 127.0.0.9 fwd to "lo"
	}
}
`,
  },
  // vlan id concatenated with Ethernet fields (the id a masked load): nft leaves out `ether type 8021q`
  {
    table: 'bridge rt_vlanconcat',
    text: `table bridge rt_vlanconcat {
	set s {
		typeof ether saddr . vlan id
		elements = { 00:11:22:33:44:55 . 5 }
	}

	map m {
		typeof vlan id . ether saddr : meta mark
		elements = { 7 . 00:11:22:33:44:55 : 0x00000001 }
	}

	chain c {
		ether saddr . vlan id { 00:11:22:33:44:55 . 5, 00:11:22:33:44:66 . 7 } accept
		ether saddr . vlan id @s accept
		ether saddr . vlan id { 00:11:22:33:44:55 . 5 } counter packets 0 bytes 0
		vlan id . ether saddr @m accept
		meta mark set vlan id . ether saddr map @m
		vlan id . ether type { 5 . ip } counter packets 0 bytes 0
		ether type . vlan id { 8021q . 5, 8021ad . 6 } drop
		vlan id . vlan type { 5 . ip, 6 . ip6 } accept
		vlan id . ether saddr vmap { 5 . 00:11:22:33:44:55 : accept, 6 . 00:11:22:33:44:66 : drop }
	}
}
`,
  },
  // a named map keyed by integer parts: nft lists `@m` right (its anonymous maps' elements it garbles)
  {
    table: 'ip rt_namedmapint',
    text: `table ip rt_namedmapint {
	map m {
		typeof ip ttl . tcp dport : meta mark
		elements = { 64 . 22 : 0x00000001 }
	}

	chain c {
		meta mark set ip ttl . tcp dport map @m
	}
}
`,
  },
  // the IP compression header (nft's comp; its flags a bitmask printed in hex)
  {
    table: 'inet rt_comp',
    text: `table inet rt_comp {
	chain c {
		comp cpi 5 accept
		comp flags 0x1 accept
		comp flags { 0x1, 0x2 } accept
		comp flags != 0x3 accept
		comp cpi 5-7 accept
		comp cpi { 1, 2 } accept
		meta l4proto ipcomp accept
	}
}
`,
  },
  // meters: a statement on an anonymous dynamic set, which nft lists nowhere else (with its size, a key's timeout,
  // a concatenated key, the element's statement stateless)
  {
    table: 'ip rt_meter',
    text: `table ip rt_meter {
	chain c {
		tcp flags syn meter flood size 128000 { ip saddr timeout 10s limit rate over 10/second } drop
		meter m2 size 65535 { ip saddr counter } accept
		meta l4proto tcp meter m3 size 1024 { ip saddr . tcp dport limit rate 5/second } accept
		meter m4 size 10 { ip daddr timeout 1m quota over 1000 bytes } drop
	}
}
`,
  },
  {
    table: 'inet rt_meter6',
    text: `table inet rt_meter6 {
	chain c {
		meter m6 size 100 { ip6 saddr limit rate over 100/minute burst 10 packets } drop
	}
}
`,
  },
  // a `$` in a rule's comment: nft -f reads it back as written (only in a log prefix it starts a variable)
  {
    table: 'ip rt_dollar',
    text: `table ip rt_dollar {
	chain c {
		counter packets 0 bytes 0 comment "cost $5"
		accept comment "$y"
		accept comment "a$"
		accept comment "$$"
		accept comment "$(x) $y"
	}
}
`,
  },
  // an Ethernet field first in a concatenation with a network field: nft -f names the network protocol by
  // `ether type` (left out of the listing), as after an Ethernet match before it; sets named and anonymous
  {
    table: 'inet rt_etherconcat',
    text: `table inet rt_etherconcat {
	set s {
		type ether_addr . ipv4_addr
		elements = { 00:11:22:33:44:55 . 169.254.1.1 }
	}

	chain c {
		ether saddr . ip saddr @s accept
		ether saddr . ip saddr . tcp dport { 00:11:22:33:44:55 . 169.254.1.1 . 22 } accept
		ether daddr . ip6 saddr . ip6 daddr { 00:11:22:33:44:55 . fd00::1 . fd00::2 } accept
		ip saddr . ether saddr { 169.254.1.1 . 00:11:22:33:44:55 } accept
	}
}
`,
  },
  {
    table: 'netdev rt_etherconcat',
    text: `table netdev rt_etherconcat {
	set s {
		type ether_addr . ipv4_addr
	}

	chain c {
		ether saddr . ip saddr { 00:11:22:33:44:55 . 169.254.1.1 } accept
		ether saddr . ip saddr @s drop
	}
}
`,
  },
];

/** Rules in a table's text: the lines of its chains other than the base chain header. */
export function ruleCount(text: string): number {
  let n = 0;
  let inChain = false;
  for (const line of text.split('\n')) {
    if (/^\tchain /.test(line)) inChain = true;
    else if (/^\t}/.test(line)) inChain = false;
    else if (inChain && line.trim() && !/^\t\ttype /.test(line)) n++;
  }
  return n;
}
