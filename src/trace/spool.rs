//! A write buffer that stays in memory while small and spills to a temporary file when large,
//! so a 30M-gas struct log never has to fit in memory.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

/// Bytes kept in memory before spilling to disk.
pub const SPILL_AT: usize = 8 << 20;

/// Append-only byte sink: memory first, then an unlinked temporary file.
pub struct Spool {
    mem: Vec<u8>,
    file: Option<BufWriter<File>>,
    len: u64,
}

impl Default for Spool {
    fn default() -> Self {
        Spool {
            mem: Vec::with_capacity(64 << 10),
            file: None,
            len: 0,
        }
    }
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Spool({} bytes, on disk: {})",
            self.len,
            self.file.is_some()
        )
    }
}

fn temp_file() -> io::Result<File> {
    let dir = std::env::temp_dir();
    for attempt in 0..16u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = dir.join(format!(
            "chaintrace-spool-{}-{nanos}-{attempt}",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                // Unlink at once: the file lives only as long as the handle, even after a crash.
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("cannot create a temporary spool file"))
}

impl Spool {
    /// Total bytes written.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies everything written so far to `out`; the spool keeps its contents.
    pub fn copy_to<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        if let Some(file) = self.file.as_mut() {
            file.flush()?;
            let f = file.get_mut();
            f.seek(SeekFrom::Start(0))?;
            io::copy(&mut (&mut *f).take(u64::MAX), out)?;
            f.seek(SeekFrom::End(0))?;
        }
        out.write_all(&self.mem)
    }

    /// Reads everything written so far into memory (for callers that need one value).
    pub fn to_vec(&mut self) -> io::Result<Vec<u8>> {
        let mut v = Vec::with_capacity(self.len as usize);
        if let Some(file) = self.file.as_mut() {
            file.flush()?;
            let f = file.get_mut();
            f.seek(SeekFrom::Start(0))?;
            f.read_to_end(&mut v)?;
            f.seek(SeekFrom::End(0))?;
        }
        v.extend_from_slice(&self.mem);
        Ok(v)
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.len += buf.len() as u64;
        if self.file.is_none() && self.mem.len() + buf.len() > SPILL_AT {
            let mut f = BufWriter::with_capacity(1 << 20, temp_file()?);
            f.write_all(&self.mem)?;
            self.mem = Vec::new();
            self.file = Some(f);
        }
        match self.file.as_mut() {
            Some(f) => f.write_all(buf),
            None => {
                self.mem.extend_from_slice(buf);
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_to_disk_and_reads_back_in_order() {
        let mut s = Spool::default();
        let chunk = vec![b'a'; 1 << 20];
        for i in 0..10u8 {
            let mut c = chunk.clone();
            c[0] = b'0' + i;
            s.write_all(&c).unwrap();
        }
        assert!(s.file.is_some(), "10 MiB spills past {SPILL_AT} bytes");
        let v = s.to_vec().unwrap();
        assert_eq!(v.len(), 10 << 20);
        assert_eq!(v[5 << 20], b'5');
        let mut out = Vec::new();
        s.copy_to(&mut out).unwrap();
        assert_eq!(out, v);
        s.write_all(b"tail").unwrap();
        let mut again = Vec::new();
        s.copy_to(&mut again).unwrap();
        assert_eq!(&again[..v.len()], &v[..]);
        assert_eq!(&again[v.len()..], b"tail");
    }
}
