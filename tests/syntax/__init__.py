"""Source text to surface trees and back (linnet/syntax)."""
