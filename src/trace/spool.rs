//! A write buffer that stays in memory while small and spills to a temporary file when large,
//! so a 30M-gas struct log never has to fit in memory: `tempfile`'s `SpooledTempFile` (which
//! creates its file safely and unlinked), behind a 1 MiB write buffer so the millions of small
//! writes of a struct log do not each become a system call once it is on disk. When what must
//! come before the struct logs is already known, the same sink writes straight through to the
//! output instead ([`Spool::direct`]): every byte is written once.

use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

use tempfile::SpooledTempFile;

/// Bytes kept in memory before spilling to disk.
pub const SPILL_AT: usize = 8 << 20;

/// Append-only byte sink: memory first, then an unlinked temporary file; or, when the bytes
/// can go to their destination as they come ([`Spool::direct`]), that destination.
pub struct Spool {
    inner: Backing,
    len: u64,
}

enum Backing {
    Temp(BufWriter<SpooledTempFile>),
    /// Straight to the output; nothing is kept.
    Direct(BufWriter<Box<dyn Write + Send>>),
}

impl Default for Spool {
    fn default() -> Self {
        Spool {
            inner: Backing::Temp(BufWriter::with_capacity(
                1 << 20,
                SpooledTempFile::new(SPILL_AT),
            )),
            len: 0,
        }
    }
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Backing::Temp(t) => write!(
                f,
                "Spool({} bytes, on disk: {})",
                self.len,
                t.get_ref().is_rolled()
            ),
            Backing::Direct(_) => write!(f, "Spool({} bytes, written through)", self.len),
        }
    }
}

impl Spool {
    /// A sink that writes through to `out` (behind a 1 MiB buffer) and keeps nothing; `head`
    /// goes first and is not counted in [`len`](Self::len).
    pub fn direct(out: Box<dyn Write + Send>, head: &[u8]) -> Self {
        let mut w = BufWriter::with_capacity(1 << 20, out);
        // Into the empty buffer: no write to `out` yet, so nothing can fail here.
        let _ = w.write_all(head);
        Spool {
            inner: Backing::Direct(w),
            len: 0,
        }
    }

    /// Whether the bytes go straight to their output ([`Spool::direct`]).
    pub fn is_direct(&self) -> bool {
        matches!(self.inner, Backing::Direct(_))
    }

    /// Total bytes written.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The spooled contents, flushed, positioned at the start; `f` reads them, then the
    /// position goes back to the end for further writes.
    fn read_back<T>(
        &mut self,
        f: impl FnOnce(&mut SpooledTempFile) -> io::Result<T>,
    ) -> io::Result<T> {
        let Backing::Temp(inner) = &mut self.inner else {
            return Err(io::Error::other(
                "the struct logs went straight to their output and were not kept",
            ));
        };
        inner.flush()?;
        let file = inner.get_mut();
        file.seek(SeekFrom::Start(0))?;
        let out = f(file);
        file.seek(SeekFrom::End(0))?;
        out
    }

    /// Copies everything written so far to `out`; the spool keeps its contents.
    pub fn copy_to<W: Write + ?Sized>(&mut self, out: &mut W) -> io::Result<()> {
        self.read_back(|f| io::copy(f, out).map(|_| ()))
    }

    /// Reads everything written so far into memory (for callers that need one value).
    pub fn to_vec(&mut self) -> io::Result<Vec<u8>> {
        let mut v = Vec::with_capacity(self.len as usize);
        self.read_back(|f| f.read_to_end(&mut v).map(|_| ()))?;
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
        match &mut self.inner {
            Backing::Temp(w) => w.write_all(buf),
            Backing::Direct(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Backing::Temp(w) => w.flush(),
            Backing::Direct(w) => w.flush(),
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
        s.flush().unwrap();
        assert!(
            matches!(&s.inner, Backing::Temp(t) if t.get_ref().is_rolled()),
            "10 MiB spills past {SPILL_AT} bytes"
        );
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

    #[test]
    fn small_spools_stay_in_memory() {
        let mut s = Spool::default();
        s.write_all(b"{\"pc\":0}").unwrap();
        assert_eq!(s.to_vec().unwrap(), b"{\"pc\":0}");
        assert!(matches!(&s.inner, Backing::Temp(t) if !t.get_ref().is_rolled()));
    }
}

#[cfg(test)]
mod direct_tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_direct_sink_writes_through_after_its_head_and_keeps_nothing() {
        let out = Arc::new(Mutex::new(Vec::new()));
        let mut s = Spool::direct(Box::new(Shared(out.clone())), b"[head]");
        s.write_all(b"abc").unwrap();
        assert_eq!(s.len(), 3, "the head is not counted");
        s.flush().unwrap();
        assert_eq!(&out.lock().unwrap()[..], b"[head]abc");
        assert!(s.to_vec().is_err() && s.copy_to(&mut Vec::new()).is_err());
    }
}
