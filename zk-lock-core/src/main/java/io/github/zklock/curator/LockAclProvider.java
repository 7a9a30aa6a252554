package io.github.zklock.curator;

import java.util.List;

import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.utils.PathUtils;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.jspecify.annotations.Nullable;

/**
 * Curator {@link ACLProvider} that creates the lock root path and every znode below it with
 * {@link ZooDefs.Ids#CREATOR_ALL_ACL}: all permissions for the identity that authenticated the
 * creating session, none for anyone else. Other znodes (the parents of the root path, a
 * namespace) get ZooKeeper's open ACL.
 *
 * <p>What this protects: ZooKeeper checks the DELETE and CREATE permissions of the parent. With
 * the lock path's znode creator-only, a client that lacks the identity can neither delete a lock
 * znode (taking the lock from its holder) nor create one (queueing for the lock, or jumping the
 * queue); with the root path creator-only, it cannot create a lock path with an open ACL either.
 * Nor can it read them: since ZooKeeper 3.9 even {@code exists} needs READ permission.
 *
 * <p>Curator asks the provider for the lock znodes and, through
 * {@code creatingParentContainersIfNeeded}, for each parent it creates, with the full path
 * including the client's namespace. A znode keeps the ACL it was created with: a root path created
 * earlier by a client without credentials keeps its open ACL (and so lets others create lock paths
 * below it) until an administrator changes it.
 *
 * <p>Only use it with an authenticated client: ZooKeeper rejects a creator ACL from a session
 * without an identity ({@code InvalidACL}).
 */
public class LockAclProvider implements ACLProvider {

	private final String protectedRoot;

	/**
	 * Create a provider for a client without a namespace.
	 * @param rootPath the lock root path, for example {@code /locks}
	 * @throws IllegalArgumentException if the root path is not a legal ZooKeeper path
	 */
	public LockAclProvider(String rootPath) {
		this(null, rootPath);
	}

	/**
	 * Create a provider.
	 * @param namespace the client's namespace ({@code CuratorFrameworkFactory.Builder.namespace}),
	 * or {@code null} for none
	 * @param rootPath the lock root path, for example {@code /locks}
	 * @throws IllegalArgumentException if the root path is not a legal ZooKeeper path
	 */
	public LockAclProvider(@Nullable String namespace, String rootPath) {
		PathUtils.validatePath(rootPath);
		this.protectedRoot = (namespace != null && !namespace.isEmpty()) ? ZKPaths.makePath(namespace, rootPath)
				: rootPath;
	}

	/**
	 * Return the ACL for znodes outside the root path: ZooKeeper's open ACL.
	 * @return {@link ZooDefs.Ids#OPEN_ACL_UNSAFE}
	 */
	@Override
	public List<ACL> getDefaultAcl() {
		return ZooDefs.Ids.OPEN_ACL_UNSAFE;
	}

	/**
	 * Return the ACL of a znode about to be created.
	 * @param path the full path, namespace included
	 * @return {@link ZooDefs.Ids#CREATOR_ALL_ACL} for the root path and below, the
	 * {@linkplain #getDefaultAcl() default} otherwise
	 */
	@Override
	public List<ACL> getAclForPath(String path) {
		return isProtected(path) ? ZooDefs.Ids.CREATOR_ALL_ACL : getDefaultAcl();
	}

	/**
	 * Return whether a path is the root path or below it.
	 * @param path the full path, namespace included
	 * @return whether the creator-only ACL applies
	 */
	public boolean isProtected(String path) {
		if (this.protectedRoot.equals("/")) {
			return true;
		}
		return path.equals(this.protectedRoot) || path.startsWith(this.protectedRoot + "/");
	}

	@Override
	public String toString() {
		return "LockAclProvider[creator-only at and below " + this.protectedRoot + "]";
	}

}
