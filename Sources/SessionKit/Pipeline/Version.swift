/// The version of render-session and SessionKit.
public enum SessionKitVersion {
    /// The release this source tree is.
    public static let current = "0.1.0"
}
