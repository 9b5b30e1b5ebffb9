#!/bin/sh
# lab's guest /init, run by dash as PID 1 from the initramfs.
#
# PID 1 must never exit (the kernel panics), so there is no `set -e`: a
# step that fails is reported on the console and the script carries on.
# The host waits for `lab-guest-ready` or `lab-guest-error: ...` on the
# console, then talks to dropbear over SSH.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

say() { echo "$*" > /dev/console; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=755 tmpfs /run
# configfs holds null_blk's memory-backed devices; a kernel may lack it.
mount -t configfs configfs /sys/kernel/config 2>/dev/null || :

hostname lab
ip link set lo up

# A keys layer appended to the initramfs may have reset these modes.
mkdir -p /root/.ssh
chmod 700 /root /root/.ssh

# busybox's poweroff/reboot/halt signal PID 1; act on them. `wait` below
# lets a trap run at once, where a foreground sleep would delay it.
trap 'poweroff -f' USR2
trap 'reboot -f' TERM
trap 'halt -f' USR1

error=
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 30 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ ! -e /sys/class/net/eth0 ]; then
	error="no eth0"
elif ! { ip addr add 10.0.2.15/24 dev eth0 &&
	ip link set eth0 up &&
	ip route add default via 10.0.2.2; }; then
	error="eth0 setup failed"
elif [ ! -s /etc/dropbear/dropbear_ed25519_host_key ]; then
	error="no host key (the keys layer is missing)"
fi

if [ -z "$error" ]; then
	# -s: keys only, no passwords. -r: the host key from the keys layer,
	# never one dropbear makes up. -F -E: stay a child of init, log to
	# the console.
	dropbear -F -E -s -p 22 -r /etc/dropbear/dropbear_ed25519_host_key \
		-P /run/dropbear.pid </dev/null &
	dropbear=$!
	# Ready means listening: port 22 (0016) in state LISTEN (0A).
	i=0
	until grep -q ':0016 [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
		if ! kill -0 $dropbear 2>/dev/null; then
			error="dropbear exited"
			break
		fi
		if [ $i -ge 100 ]; then
			error="dropbear is not listening after 10 s"
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
fi

if [ -z "$error" ]; then
	say lab-guest-ready
else
	say "lab-guest-error: $error"
fi

# Stay alive. dash's wait reaps every child, so orphans that the kernel
# reparents to PID 1 do not linger as zombies.
while :; do
	sleep 3600 &
	wait $!
done
