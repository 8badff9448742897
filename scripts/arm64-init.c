// SPDX-License-Identifier: GPL-2.0
/*
 * /init of the arm64 guest of scripts/arm64-check.sh: there is no shell
 * in its initramfs, so run each statically linked test in /t, say how it
 * exited, and power off.
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	int failed = 0;

	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	/* The tests read the lock's counters and live heads there. */
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	/* The kernel passes the tests to run as init's arguments. */
	for (int i = 1; i < argc; i++) {
		char path[64];
		int status;
		pid_t pid;

		snprintf(path, sizeof(path), "/t/%s", argv[i]);
		printf("# arm64: running %s\n", path);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			chdir("/tmp");
			execl(path, path, (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		printf("# arm64: %s exit %d\n", argv[i],
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128);
		failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	printf("# arm64: %d test programs failed\n", failed);
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
