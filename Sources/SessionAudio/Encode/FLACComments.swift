internal import CFLAC

#if canImport(Glibc)
import Glibc
#endif

/// Adds Vorbis comments to a finished FLAC file with libFLAC's metadata interface.
///
/// libsndfile writes only the tags it has names for (title, artist, album, …); chapters are
/// comments with names of their own (`CHAPTER001`, `CHAPTER001NAME`), so they are added here once
/// libsndfile has closed the file. libFLAC rewrites the metadata blocks in place when there is room
/// and otherwise the whole file through a temporary copy beside it; the audio frames are copied,
/// never decoded again.
enum FLACComments {
    /// Appends `comments` (field, value) to `path`'s `VORBIS_COMMENT` block, adding the block if
    /// the file has none.
    ///
    /// The corresponding libFLAC calls are `FLAC__metadata_chain_read`,
    /// `FLAC__metadata_object_vorbiscomment_append_comment` and `FLAC__metadata_chain_write`.
    static func append(_ comments: [(String, String)], to path: String) throws(AudioError) {
        guard !comments.isEmpty else { return }
        guard let chain = FLAC__metadata_chain_new() else {
            throw AudioError(.cannotWrite, path: path, reason: "libFLAC: cannot allocate a metadata chain")
        }
        defer { FLAC__metadata_chain_delete(chain) }
        func failure(_ what: String) -> AudioError {
            let status = FLAC__metadata_chain_status(chain)
            let words = String(cString: cflac_chain_status_string(status))
            return AudioError(
                .cannotWrite,
                path: path,
                reason: "cannot \(what) (libFLAC: \(words))",
                libraryCode: AudioError.LibraryCode(.libFLAC, Int32(status.rawValue))
            )
        }
        guard FLAC__metadata_chain_read(chain, path) != 0 else { throw failure("read the FLAC metadata") }
        guard let iterator = FLAC__metadata_iterator_new() else {
            throw AudioError(.cannotWrite, path: path, reason: "libFLAC: cannot allocate a metadata iterator")
        }
        defer { FLAC__metadata_iterator_delete(iterator) }
        FLAC__metadata_iterator_init(iterator, chain)
        var block: UnsafeMutablePointer<FLAC__StreamMetadata>?
        repeat {
            if FLAC__metadata_iterator_get_block_type(iterator) == FLAC__METADATA_TYPE_VORBIS_COMMENT {
                block = FLAC__metadata_iterator_get_block(iterator)
                break
            }
        } while FLAC__metadata_iterator_next(iterator) != 0
        if block == nil {
            // The iterator stands on the last block: the new one goes after it, and the chain owns it.
            guard let created = FLAC__metadata_object_new(FLAC__METADATA_TYPE_VORBIS_COMMENT) else {
                throw AudioError(.cannotWrite, path: path, reason: "libFLAC: cannot allocate a comment block")
            }
            guard FLAC__metadata_iterator_insert_block_after(iterator, created) != 0 else {
                FLAC__metadata_object_delete(created)
                throw failure("add a comment block")
            }
            block = created
        }
        guard let block else { return }
        for (field, value) in comments {
            var entry = FLAC__StreamMetadata_VorbisComment_Entry()
            guard FLAC__metadata_object_vorbiscomment_entry_from_name_value_pair(&entry, field, value) != 0 else {
                throw AudioError(.cannotWrite, path: path, reason: "libFLAC: \(field) is not a valid comment name")
            }
            // Not copied: the block takes the entry's bytes over.
            guard FLAC__metadata_object_vorbiscomment_append_comment(block, entry, 0) != 0 else {
                free(entry.entry)
                throw AudioError(.cannotWrite, path: path, reason: "libFLAC: cannot add the \(field) comment")
            }
        }
        guard FLAC__metadata_chain_write(chain, 1, 0) != 0 else { throw failure("write the FLAC metadata") }
    }
}
