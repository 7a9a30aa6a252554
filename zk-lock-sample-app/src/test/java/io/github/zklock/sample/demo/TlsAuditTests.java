package io.github.zklock.sample.demo;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import javax.net.ssl.SSLHandshakeException;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.zklock.test.ZooKeeperExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link TlsAudit} reports of a lock tree's ACLs, on a real ZooKeeper server (without TLS: the
 * ACLs are the same; a digest identity stands in for the x509 one of {@code ./demo.sh --tls}), and
 * how it names what a refused TLS connection saw.
 */
class TlsAuditTests {

	@RegisterExtension
	final ZooKeeperExtension zooKeeper = new ZooKeeperExtension();

	@Test
	void readsTheRootPathsAclAndCountsTheZnodesBelowWithAnotherOne() throws Exception {
		CuratorFramework owner = this.zooKeeper.newClient((builder) -> builder.authorization("digest",
				"app:app-secret".getBytes(StandardCharsets.UTF_8)));
		owner.create().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath("/locks");
		owner.create().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath("/locks/stock");
		owner.create()
			.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
			.withACL(ZooDefs.Ids.CREATOR_ALL_ACL)
			.forPath("/locks/stock/lock-");
		owner.create().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath("/locks/open");
		owner.create()
			.withACL(List.of(new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)))
			.forPath("/locks/open/read-only");
		String app = DigestAuthenticationProvider.generateDigest("app:app-secret");

		TlsAudit.AclTree tree = TlsAudit.AclTree.read(owner.getZookeeperClient().getZooKeeper(), "/locks");

		assertThat(tree).isEqualTo(new TlsAudit.AclTree("digest:" + app + ":cdrwa", 4, 2));
		assertThat(tree.toFields()).isEqualTo("root_acl=digest:" + app + ":cdrwa znodes_below=4 other_acl_below=2");
	}

	@Test
	void countsWhatAnotherIdentityCannotReadAsAnotherAcl() throws Exception {
		CuratorFramework owner = this.zooKeeper.newClient((builder) -> builder.authorization("digest",
				"app:app-secret".getBytes(StandardCharsets.UTF_8)));
		owner.create().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath("/locks");
		owner.create().withACL(ZooDefs.Ids.CREATOR_ALL_ACL).forPath("/locks/stock");
		CuratorFramework outsider = this.zooKeeper.newClient();

		TlsAudit.AclTree tree = TlsAudit.AclTree.read(outsider.getZookeeperClient().getZooKeeper(), "/locks");

		assertThat(tree).isEqualTo(new TlsAudit.AclTree("world:anyone:cdrwa", 1, 1));
	}

	@Test
	void saysNoneForAMissingRootPath() throws Exception {
		CuratorFramework client = this.zooKeeper.newClient();

		assertThat(TlsAudit.AclTree.read(client.getZookeeperClient().getZooKeeper(), "/locks").toFields())
			.isEqualTo("root_acl=none znodes_below=0 other_acl_below=0");
	}

	@Test
	void formatsEachEntryWithZooKeepersPermissionLetters() {
		assertThat(TlsAudit.format(List.of(new ACL(ZooDefs.Perms.ALL, new Id("x509", "CN=zk-lock-app")),
				new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.ADMIN, ZooDefs.Ids.ANYONE_ID_UNSAFE))))
			.isEqualTo("x509:CN=zk-lock-app:cdrwa,world:anyone:ra");
	}

	@Test
	void namesTheAlertTheServerSentOrHowTheConnectionEnded() {
		assertThat(TlsAudit.outcome(new SSLHandshakeException("Received fatal alert: bad_certificate")))
			.isEqualTo("alert:bad_certificate");
		assertThat(TlsAudit.outcome(new SSLHandshakeException("Remote host terminated the handshake")))
			.isEqualTo("closed");
		assertThat(TlsAudit.outcome(new SocketTimeoutException("Read timed out"))).isEqualTo("timeout");
		assertThat(TlsAudit.outcome(new ConnectException("Connection refused")))
			.isEqualTo("error:ConnectException");
	}

}
