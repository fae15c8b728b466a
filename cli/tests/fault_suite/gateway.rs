//! An `ai-tools mcp --http` gateway process on a fixed loopback port, so
//! that it can be killed and started again where clients expect it. Each
//! start logs to a file of its own, kept for the failure message.

use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Gateway {
    /// `A` or `B`, as the reports name it.
    pub name: &'static str,
    pub addr: SocketAddr,
    grpc: String,
    flags: Vec<String>,
    dir: PathBuf,
    child: Option<Child>,
    starts: u32,
}

impl Gateway {
    /// Starts `ai-tools mcp --http ADDR` over `links.proto`, calling `grpc`,
    /// with `flags`; returns once it serves.
    pub fn start(
        name: &'static str,
        grpc: &str,
        flags: &[String],
        dir: PathBuf,
    ) -> Result<Self, String> {
        let mut gateway = Self {
            name,
            addr: port_below_ephemeral(),
            grpc: grpc.to_owned(),
            flags: flags.to_vec(),
            dir,
            child: None,
            starts: 0,
        };
        gateway.spawn()?;
        Ok(gateway)
    }

    fn log_path(&self) -> PathBuf {
        self.dir
            .join(format!("gateway-{}-{}.log", self.name, self.starts))
    }

    /// Starts the process again on its address; returns once it serves.
    /// A port just released may still be taken for a moment: the start is
    /// tried again for up to 10 s.
    pub fn spawn(&mut self) -> Result<Duration, String> {
        let began = Instant::now();
        loop {
            self.starts += 1;
            let log = self.log_path();
            let file = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
            let mut child = crate::support::links_mcp_command(&self.grpc)
                .arg("--http")
                .arg(self.addr.to_string())
                .args(&self.flags)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(file)
                .spawn()
                .map_err(|e| format!("gateway {}: {e}", self.name))?;
            let until = Instant::now() + Duration::from_secs(30);
            let served = loop {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if text.contains(&format!("at http://{}/mcp", self.addr)) {
                    break true;
                }
                if matches!(child.try_wait(), Ok(Some(_))) || Instant::now() > until {
                    break false;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            if served {
                self.child = Some(child);
                return Ok(began.elapsed());
            }
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if !text.contains("in use") || began.elapsed() > Duration::from_secs(10) {
                return Err(format!(
                    "gateway {} did not start on {}: {}",
                    self.name,
                    self.addr,
                    text.lines().rev().take(10).collect::<Vec<_>>().join(" | ")
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGKILL: no shutdown at all.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, as a rolling restart sends; waits for the exit (SIGKILL
    /// after 10 s). How long the exit took.
    pub fn terminate(&mut self) -> Result<Duration, String> {
        let Some(mut child) = self.child.take() else {
            return Ok(Duration::ZERO);
        };
        let began = Instant::now();
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .map_err(|e| format!("kill -TERM: {e}"))?;
        if !sent.success() {
            return Err(format!("kill -TERM {} failed", child.id()));
        }
        while began.elapsed() < Duration::from_secs(10) {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return Ok(began.elapsed());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(format!(
            "gateway {} did not exit within 10 s of SIGTERM",
            self.name
        ))
    }

    /// The WARN lines of every start's log, for the report.
    pub fn warnings(&self) -> Vec<String> {
        (1..=self.starts)
            .flat_map(|n| {
                std::fs::read_to_string(self.dir.join(format!("gateway-{}-{n}.log", self.name)))
                    .unwrap_or_default()
                    .lines()
                    .filter(|l| l.contains("WARN"))
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// A loopback address whose port is free and below the kernel's ephemeral
/// range (32768 and up): while the gateway restarts, no outgoing
/// connection of the callers can be given its port.
fn port_below_ephemeral() -> SocketAddr {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    (0..200u32)
        .map(|i| {
            let port = 30_000 + (seed.wrapping_add(i.wrapping_mul(7919)) % 2_700);
            SocketAddr::from(([127, 0, 0, 1], u16::try_from(port).unwrap_or(30_000)))
        })
        .find(|addr| std::net::TcpListener::bind(addr).is_ok())
        .unwrap_or_else(crate::support::free_loopback_addr)
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.kill();
    }
}
