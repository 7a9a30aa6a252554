package io.github.zklock.autoconfigure;

import org.apache.curator.framework.CuratorFrameworkFactory;

/**
 * Callback to customize the {@link CuratorFrameworkFactory.Builder} of the auto-configured
 * {@code CuratorFramework} (authentication, ACL provider, compression, thread factory...) after
 * {@code zk.lock.*} has been applied. Customizers run in {@code @Order} order. Not used when the
 * application defines its own {@code CuratorFramework} bean.
 */
@FunctionalInterface
public interface CuratorFrameworkBuilderCustomizer {

	/**
	 * Customize the builder.
	 * @param builder the builder to customize
	 */
	void customize(CuratorFrameworkFactory.Builder builder);

}
