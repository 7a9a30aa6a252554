package io.github.zklock.curator;

import org.apache.curator.utils.PathUtils;
import org.apache.curator.utils.ZKPaths;

import io.github.zklock.InvalidLockPathException;

/**
 * Checks keys and maps them to lock paths: the root path joined with the key, with Curator's
 * {@link ZKPaths}. A key is refused before any request when ZooKeeper would refuse it, or would
 * silently name another znode (a lone surrogate becomes {@code ?} in UTF-8), or when the full path
 * is longer than {@link CuratorLockRegistry#MAX_PATH_LENGTH}.
 */
final class LockPaths {

	private LockPaths() {
	}

	/**
	 * Check a root path.
	 * @param rootPath the znode below which lock paths live
	 * @return the root path
	 * @throws InvalidLockPathException if it is not a legal ZooKeeper path
	 */
	static String validRootPath(String rootPath) {
		try {
			PathUtils.validatePath(rootPath);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockPathException("Invalid lock root path '" + rootPath + "': " + ex.getMessage(), ex);
		}
		return rootPath;
	}

	/**
	 * Check a key and return its lock path.
	 * @param rootPath a valid root path
	 * @param key the key, starting with {@code /}
	 * @return the lock path
	 * @throws InvalidLockPathException if the key is not legal or the lock path too long
	 */
	static String lockPath(String rootPath, String key) {
		if (key == null || key.isEmpty() || key.equals("/")) {
			throw new InvalidLockPathException("Lock path must name a znode below the root path, was '" + key + "'");
		}
		if (key.length() + rootPath.length() > CuratorLockRegistry.MAX_PATH_LENGTH) {
			throw new InvalidLockPathException("Lock path of " + key.length() + " characters starting with '"
					+ key.substring(0, Math.min(40, key.length())) + "...' is longer than the limit of "
					+ CuratorLockRegistry.MAX_PATH_LENGTH + " characters for a full lock path");
		}
		try {
			PathUtils.validatePath(key);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockPathException("Invalid lock path '" + key + "': " + ex.getMessage(), ex);
		}
		for (int i = 0; i < key.length(); i++) {
			// ZooKeeper's own check lets U+D800 through; sent as UTF-8 it would become '?' and
			// name another znode.
			if (Character.isSurrogate(key.charAt(i))) {
				throw new InvalidLockPathException("Invalid lock path: surrogate character at index " + i);
			}
		}
		return ZKPaths.makePath(rootPath, key);
	}

}
