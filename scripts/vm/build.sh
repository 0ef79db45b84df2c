#!/usr/bin/env bash
# scripts/vm/build.sh - prepare a Debian kernel and an initramfs for the
# kernel-test VM (DESIGN.md section 5, tier 3). Idempotent: a rerun with a
# warm cache only checks a few files and prints the cache folder.
#
# Usage:  bash scripts/vm/build.sh
# Env:    SYNPLUG_KERNEL   Debian package naming the kernel to use
#                          (default linux-image-amd64; metapackages such as
#                          linux-image-6.12-amd64 are resolved to the real
#                          image package they depend on).
#         SYNPLUG_VM_CACHE cache root (default <repo>/.cache/vm)
# Output: messages on stderr; the cache folder's path as the only stdout line.
#         That folder holds vm.env (shell variables for run.sh):
#           KERNEL_PACKAGE  real image package, e.g. linux-image-6.1.0-57-amd64
#           KERNEL_VERSION  uname -r of the guest, e.g. 6.1.0-57-amd64
#           KERNEL_DIR      folder the package was unpacked into (dpkg -x)
#           VMLINUZ INITRD  files for qemu -kernel / -initrd
#           VMLINUX         uncompressed kernel for a faster PVH boot, or empty
#
# Steps:
#   1. install the host packages the VM needs (only if dpkg says missing);
#   2. resolve SYNPLUG_KERNEL to a real image package (apt-cache depends);
#   3. apt-get download + dpkg -x it into .cache/vm/<package>/root, depmod,
#      and unpack the ELF vmlinux from the bzImage (PVH boot, ~5 s faster);
#   4. build initramfs.gz: static busybox, the virtio/9p modules in the
#      order `modprobe --show-depends` gives (decompressed for busybox
#      insmod), an /init that mounts the host root over 9p and runs the
#      command a run.sh invocation left in its run folder, and a
#      /sbin/modprobe wrapper so the kernel's module autoloading works.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SELF="$REPO/scripts/vm/build.sh"
VM_CACHE=${SYNPLUG_VM_CACHE:-$REPO/.cache/vm}
REQUESTED=${SYNPLUG_KERNEL:-linux-image-amd64}

log() { printf '[vm-build] %s\n' "$*" >&2; }
die() { printf '[vm-build] error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get, dpkg, qemu virtfs)"

# --- 1. host packages ---------------------------------------------------------
HOST_PACKAGES=(qemu-system-x86 busybox-static cpio kmod)
missing=()
for p in "${HOST_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# xz/zstd decompress modules; they are Priority: required/important on Debian,
# but check anyway.
command -v xz >/dev/null 2>&1 || missing+=(xz-utils)
command -v zstd >/dev/null 2>&1 || missing+=(zstd)
apt_updated=no
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq >&2
    apt_updated=yes
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >&2
fi

# --- 2. resolve the kernel package -------------------------------------------
# A metapackage (linux-image-amd64, linux-image-6.12-amd64) depends on exactly
# one linux-image-* package; a real image package depends on none. Follow the
# chain until it ends. apt-cache takes seconds on a busy machine, so the
# answer is kept in .cache/vm/resolved/ next to a fingerprint of apt's
# package lists, and asked again only when those lists change.
first_image_dep() {
    local out
    out=$(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances "$1" 2>/dev/null) || return 1
    printf '%s\n' "$out" |
        sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \(linux-image-[^ ]*\)$/\2/p' |
        tr -d '<>' | head -n 1
}
resolve_kernel() {
    local pkg=$1 next
    for _ in 1 2 3 4; do
        next=$(first_image_dep "$pkg") || return 1
        [ -n "$next" ] || { echo "$pkg"; return 0; }
        pkg=$next
    done
    return 1
}
lists_fingerprint() {
    stat -c '%n %s %Y' /var/lib/apt/lists/*_Packages* 2>/dev/null | md5sum | cut -d' ' -f1
}
RESOLVED="$VM_CACHE/resolved/$REQUESTED"
KERNEL_PACKAGE=
if [ -f "$RESOLVED" ] && [ "$(sed -n 2p "$RESOLVED")" = "$(lists_fingerprint)" ]; then
    KERNEL_PACKAGE=$(sed -n 1p "$RESOLVED")
fi
if [ -z "$KERNEL_PACKAGE" ]; then
    if ! KERNEL_PACKAGE=$(resolve_kernel "$REQUESTED"); then
        # Unknown to apt: maybe its package lists were never fetched.
        [ "$apt_updated" = yes ] || { log "apt-get update (no record of $REQUESTED)"; apt-get update -qq >&2; }
        KERNEL_PACKAGE=$(resolve_kernel "$REQUESTED") || die "no Debian package named '$REQUESTED'"
    fi
    mkdir -p "$VM_CACHE/resolved"
    printf '%s\n%s\n' "$KERNEL_PACKAGE" "$(lists_fingerprint)" >"$RESOLVED.$$"
    mv "$RESOLVED.$$" "$RESOLVED"
fi
[ "$KERNEL_PACKAGE" = "$REQUESTED" ] || log "$REQUESTED -> $KERNEL_PACKAGE"

CACHE="$VM_CACHE/$KERNEL_PACKAGE"
KERNEL_DIR="$CACHE/root"
mkdir -p "$CACHE"
# Two builds of the same kernel at once would trample each other.
exec 9>"$CACHE/.lock"
flock 9

# --- 3. download, unpack, depmod ---------------------------------------------
if [ ! -e "$CACHE/.unpacked" ]; then
    log "downloading $KERNEL_PACKAGE"
    rm -rf "$CACHE/dl" "$KERNEL_DIR"
    mkdir -p "$CACHE/dl"
    # apt drops privileges to _apt for downloads; let it write here.
    chown _apt "$CACHE/dl" 2>/dev/null || true
    (cd "$CACHE/dl" && apt-get download -q "$KERNEL_PACKAGE" >&2)
    deb=$(ls "$CACHE/dl"/*.deb)
    log "unpacking $(basename "$deb")"
    dpkg -x "$deb" "$KERNEL_DIR"
    rm -rf "$CACHE/dl"
    touch "$CACHE/.unpacked"
fi
versions=("$KERNEL_DIR"/lib/modules/*)
if [ "${#versions[@]}" -ne 1 ] || [ ! -d "${versions[0]}" ]; then
    die "expected one folder in $KERNEL_DIR/lib/modules"
fi
KERNEL_VERSION=$(basename "${versions[0]}")
VMLINUZ="$KERNEL_DIR/boot/vmlinuz-$KERNEL_VERSION"
[ -f "$VMLINUZ" ] || die "no $VMLINUZ in $KERNEL_PACKAGE"
if [ ! -e "$CACHE/.depmod" ]; then
    log "depmod $KERNEL_VERSION"
    depmod -b "$KERNEL_DIR" "$KERNEL_VERSION"
    touch "$CACHE/.depmod"
fi

# --- 3b. uncompressed kernel for a PVH boot -----------------------------------
# Under TCG, the bzImage's own decompressor takes about 5 s per boot. Debian
# kernels have CONFIG_PVH=y, so qemu can load the plain ELF vmlinux instead.
# Unpack it once from the bzImage payload (the first offset with an xz, zstd
# or gzip magic that decompresses to an ELF file). run.sh falls back to
# vmlinuz when this fails or when SYNPLUG_VM_PVH=0.
VMLINUX="$CACHE/vmlinux"
extract_vmlinux() {
    local magic tool off
    for magic in xz zstd gzip; do
        case $magic in
            xz) pattern=$'\xfd7zXZ\x00' tool='xz -dc' ;;
            zstd) pattern=$'\x28\xb5\x2f\xfd' tool='zstd -qdc' ;;
            gzip) pattern=$'\x1f\x8b\x08' tool='gzip -dc' ;;
        esac
        for off in $(grep -abo "$pattern" "$VMLINUZ" 2>/dev/null | cut -d: -f1 | head -n 5); do
            # The payload is followed by other data: the decompressor then
            # complains and exits non-zero, but the kernel is complete.
            tail -c +$((off + 1)) "$VMLINUZ" | $tool >"$VMLINUX.tmp" 2>/dev/null || true
            if [ "$(head -c 4 "$VMLINUX.tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
                mv "$VMLINUX.tmp" "$VMLINUX"
                return 0
            fi
        done
    done
    rm -f "$VMLINUX.tmp"
    return 1
}
if [ ! -e "$CACHE/.vmlinux" ]; then
    if grep -q '^CONFIG_PVH=y' "$KERNEL_DIR/boot/config-$KERNEL_VERSION" 2>/dev/null &&
        extract_vmlinux; then
        log "unpacked vmlinux for a PVH boot"
    else
        log "no PVH-bootable vmlinux; the VM will boot the compressed vmlinuz"
        rm -f "$VMLINUX"
    fi
    touch "$CACHE/.vmlinux"
fi
[ -f "$VMLINUX" ] || VMLINUX=

# --- 4. initramfs ------------------------------------------------------------
INITRD="$CACHE/initramfs.gz"
if [ ! -f "$INITRD" ] || [ "$SELF" -nt "$INITRD" ]; then
    log "building initramfs for $KERNEL_VERSION"
    work=$(mktemp -d "$CACHE/initramfs.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work"/{bin,sbin,dev,proc,sys,mnt,modules,etc}
    cp /bin/busybox "$work/bin/busybox"
    # Applet links now: the kernel needs /bin/sh to run /init at all.
    for applet in $(/bin/busybox --list); do
        [ -e "$work/bin/$applet" ] || ln -s busybox "$work/bin/$applet"
    done
    file -b /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
        ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' ||
        die "/bin/busybox is not static (is busybox-static installed?)"

    # Modules for the 9p root, dependencies first. Without -a, modprobe takes
    # the names after the first as module parameters. Built-ins print
    # "builtin NAME" and are skipped; repeats are dropped.
    modprobe -d "$KERNEL_DIR" -S "$KERNEL_VERSION" -a --show-depends \
        virtio_pci 9pnet_virtio 9p >"$work/deps.txt"
    n=0
    : >"$work/modules.list"
    while read -r kind path _; do
        [ "$kind" = insmod ] || continue
        name=$(basename "$path"); name=${name%%.ko*}
        grep -qx "[0-9]*-$name.ko" "$work/modules.list" && continue
        n=$((n + 1))
        out=$(printf '%02d-%s.ko' "$n" "$name")
        case $path in
            *.ko) cp "$path" "$work/modules/$out" ;;
            *.ko.xz) xz -dc "$path" >"$work/modules/$out" ;;
            *.ko.zst) zstd -qdc "$path" >"$work/modules/$out" ;;
            *.ko.gz) gzip -dc "$path" >"$work/modules/$out" ;;
            *) die "unknown module format: $path" ;;
        esac
        echo "$out" >>"$work/modules.list"
    done <"$work/deps.txt"
    mv "$work/modules.list" "$work/modules/order"
    rm "$work/deps.txt"
    log "initramfs modules: $(sed 's/^[0-9]*-//; s/\.ko$//' "$work/modules/order" | tr '\n' ' ')"

    # The kernel runs /sbin/modprobe (in the initramfs root, where kthreadd
    # lives) to autoload e.g. sch_plug or nft-expr-queue. Forward that to the
    # host's kmod inside the shared root, pointed at the unpacked kernel (the
    # host has no /lib/modules; /init records the folder in /etc/synplug-kdir).
    cat >"$work/sbin/modprobe" <<'EOF'
#!/bin/sh
exec /bin/chroot /mnt /sbin/modprobe -d "$(cat /etc/synplug-kdir)" "$@"
EOF
    chmod 755 "$work/sbin/modprobe"

    # /init: PID 1. Runs under busybox sh with no other userland.
    cat >"$work/init" <<'EOF'
#!/bin/sh
# synplug VM init (generated by scripts/vm/build.sh).
# Kernel command line: synplug_run=<host run folder> synplug_kdir=<unpacked kernel>
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fail() {
    echo "synplug-vm: $*" >/dev/console
    echo "synplug-vm: $*" >/dev/ttyS1 2>/dev/null
    sync
    poweroff -f
}

RUN= KDIR= KEEP=
for arg in $(cat /proc/cmdline); do
    case $arg in
        synplug_run=*) RUN=${arg#synplug_run=} ;;
        synplug_kdir=*) KDIR=${arg#synplug_kdir=} ;;
        synplug_keep=*) KEEP=${arg#synplug_keep=} ;;
    esac
done
[ -n "$RUN" ] && [ -n "$KDIR" ] || fail "synplug_run= or synplug_kdir= missing from the kernel command line"

# Output channel: ttyS1 goes to a host file; no \n -> \r\n translation.
stty -F /dev/ttyS1 raw -echo

for ko in $(cat /modules/order); do
    insmod "/modules/$ko" || fail "insmod $ko failed"
done

mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose hostroot /mnt ||
    fail "cannot mount the host root over 9p"
[ -d "/mnt$RUN" ] || fail "run folder $RUN not visible over 9p"

# Guest-only filesystems over the shared root (the host never sees these).
mount -t proc proc /mnt/proc
mount -t sysfs sysfs /mnt/sys
mount -t devtmpfs devtmpfs /mnt/dev
mkdir -p /mnt/dev/pts /mnt/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /mnt/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /mnt/dev/shm
mount -t tmpfs -o mode=755 tmpfs /mnt/run
# A repository under the host's /tmp (a clone in /tmp) would be hidden by the
# guest's own /tmp: it is bound back in place (synplug_keep=, from run.sh).
case $KEEP in
    /tmp/?*) mkdir -p /hosttmp && mount -o bind /mnt/tmp /hosttmp || fail "cannot bind the host's /tmp" ;;
esac
mount -t tmpfs -o mode=1777 tmpfs /mnt/tmp
case $KEEP in
    /tmp/?*) mkdir -p "/mnt$KEEP" && mount -o bind "/hosttmp${KEEP#/tmp}" "/mnt$KEEP" || fail "cannot bind $KEEP back into the guest's /tmp" ;;
esac
[ -d "/mnt$KDIR/lib/modules/$(uname -r)" ] || fail "no modules for $(uname -r) in $KDIR"
echo "$KDIR" >/etc/synplug-kdir

cut -d' ' -f1 /proc/uptime >"/mnt$RUN/boot-uptime"
chroot /mnt /bin/bash "$RUN/guest.sh" "$RUN" "$KDIR"
echo $? >"/mnt$RUN/guest-status"
sync
poweroff -f
EOF
    chmod 755 "$work/init"

    (cd "$work" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) |
        gzip -1 >"$INITRD.tmp"
    mv "$INITRD.tmp" "$INITRD"
    rm -rf "$work"
    trap - EXIT
fi

cat >"$CACHE/vm.env.tmp" <<EOF
KERNEL_PACKAGE=$KERNEL_PACKAGE
KERNEL_VERSION=$KERNEL_VERSION
KERNEL_DIR=$KERNEL_DIR
VMLINUZ=$VMLINUZ
VMLINUX=$VMLINUX
INITRD=$INITRD
EOF
mv "$CACHE/vm.env.tmp" "$CACHE/vm.env"
echo "$CACHE"
