//! The few operating-system calls a node's process needs beyond `std::process`: its own
//! process group (so that whatever it starts dies with it), a look at whether it exited that
//! leaves it unreaped (so that its group id cannot be reused before the group is killed),
//! and `poll(2)` on a pipe (so that a silent node cannot hang a run).
//!
//! Elsewhere than on Unix these degrade to what `std` offers: the direct child is killed,
//! and a read blocks without a deadline.

use std::process::{Child, Command};
use std::time::Duration;

/// Starts the command's process in a process group of its own, whose id is its pid: a node
/// started through a shell (`sh -c "python3 node.py"`) or one that forks is killed whole.
pub(crate) fn own_group(command: &mut Command) -> &mut Command {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0)
    }
    #[cfg(not(unix))]
    {
        command
    }
}

/// Kills `child`'s whole process group (on Unix), or `child` alone. Called before `child`
/// is reaped, so that its pid, the group's id, is still its own.
pub(crate) fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        if let Ok(pgid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: a signal to a process group this process created; a group already gone
            // gives ESRCH, which changes nothing.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
}

/// Whether `child` has exited, asked `tries` times `pause` apart (no clock is read), without
/// reaping it: its process group can still be killed by its id afterwards.
pub(crate) fn exits_within(child: &mut Child, tries: u32, pause: Duration) -> bool {
    for attempt in 0..tries {
        if has_exited(child) {
            return true;
        }
        if attempt + 1 < tries {
            std::thread::sleep(pause);
        }
    }
    false
}

#[cfg(target_os = "linux")]
fn has_exited(child: &mut Child) -> bool {
    let pid: libc::id_t = child.id();
    // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid on our own child; WNOWAIT leaves it waitable (unreaped).
    let asked = unsafe {
        libc::waitid(
            libc::P_PID,
            pid,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid is set by waitid (0 when the child has not changed state).
    asked == 0 && unsafe { info.si_pid() } != 0
}

/// Without `waitid(WNOWAIT)`: asking reaps the child (`std` keeps its status).
#[cfg(not(target_os = "linux"))]
fn has_exited(child: &mut Child) -> bool {
    matches!(child.try_wait(), Ok(Some(_)))
}

/// Whether `pipe` has something to read (or is closed) within `wait` (a signal that
/// interrupts the wait starts it again: a wait only ever grows a little).
#[cfg(unix)]
pub(crate) fn wait_readable(pipe: &impl std::os::unix::io::AsRawFd, wait: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(wait.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    loop {
        // SAFETY: one valid pollfd, for the length given.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        if ready >= 0 {
            return ready > 0;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// Without `poll`, a read simply blocks: the deadline is not enforced.
#[cfg(not(unix))]
pub(crate) fn wait_readable<T>(_pipe: &T, _wait: Duration) -> bool {
    true
}

/// Makes reads of `pipe` return at once when it is empty.
#[cfg(unix)]
pub(crate) fn set_nonblocking(pipe: &impl std::os::unix::io::AsRawFd) {
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a file descriptor this process owns, flags read then extended.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Without `fcntl`, reads block.
#[cfg(not(unix))]
pub(crate) fn set_nonblocking<T>(_pipe: &T) {}
