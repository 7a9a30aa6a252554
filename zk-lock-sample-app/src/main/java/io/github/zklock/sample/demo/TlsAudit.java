package io.github.zklock.sample.demo;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.common.X509Exception;
import org.apache.zookeeper.data.ACL;
import org.jspecify.annotations.Nullable;

/**
 * What {@code ./demo.sh --tls} observes of the ZooKeeper server that speaks TLS and requires client
 * certificates ({@code scripts/secure-zookeeper.sh}, {@code ssl.clientAuth=need}), after the
 * instances used it. Prints one line:
 * <pre>
 * TLS protocol=TLSv1.3 cipher=TLS_AES_256_GCM_SHA384 with_certificate=answered:imok without_certificate=alert:bad_certificate root_acl=x509:CN=zk-lock-app:cdrwa znodes_below=9 other_acl_below=0
 * </pre>
 * <ul>
 * <li>{@code protocol}, {@code cipher}: what a TLS connection with the client certificate and the
 * instances' TLS settings negotiated with the server: ZooKeeper's {@code ClientX509Util} with
 * TLSv1.3 and TLSv1.2 offered (zk-lock's choice when the SSL bundle names no protocols) and
 * ZooKeeper's default cipher suites.</li>
 * <li>{@code with_certificate}, {@code without_certificate}: what that connection, and one with the
 * same trust store but no client certificate, got when it sent the four-letter word {@code ruok}:
 * {@code answered:<answer>}, {@code alert:<name>} when the server sent a TLS alert, {@code closed}
 * when it closed the connection without either, {@code timeout}, or {@code error:<exception>}.</li>
 * <li>{@code root_acl}: the ACL of the lock root path, read by a ZooKeeper session with the client
 * certificate: each entry {@code scheme:id:permissions} (ZooKeeper's letters {@code cdrwa}),
 * {@code none} when the znode does not exist, {@code unreadable} when the session may not read it.</li>
 * <li>{@code znodes_below}: the znodes below the root path that this session found;
 * {@code other_acl_below}: how many of them have an ACL other than the root path's (or cannot be
 * read).</li>
 * </ul>
 * Usage: {@code TlsAudit <host:port> <root-path> <key-store> <trust-store> <password>} (the stores
 * PKCS12, the password of both and of the key). Exit status 0 when it observed all of the above, 1
 * when the session with the certificate was not connected within {@value #TIMEOUT_SECONDS} s, 2 on
 * bad arguments. It prints what it saw and judges nothing: that is the caller's part.
 */
public final class TlsAudit {

	private static final int TIMEOUT_SECONDS = 30;

	private static final Pattern ALERT = Pattern.compile("Received fatal alert: (\\S+)");

	private TlsAudit() {
	}

	/**
	 * The ACLs of a root path and of the znodes below it.
	 *
	 * @param rootAcl the root path's ACL as printed ({@code none}, {@code unreadable}, or entries)
	 * @param znodesBelow the znodes found below the root path
	 * @param otherAclBelow how many of them have another ACL than the root path, or none readable
	 */
	public record AclTree(String rootAcl, long znodesBelow, long otherAclBelow) {

		/**
		 * Read the ACLs, walking the tree below the root path depth first. A znode deleted while
		 * the walk goes on is left out; one whose children cannot be listed counts itself only.
		 * @param zooKeeper a connected session
		 * @param rootPath the root path, for example {@code /locks}
		 * @return the ACLs
		 * @throws KeeperException if ZooKeeper fails otherwise (connection loss, session expired)
		 * @throws InterruptedException if interrupted
		 */
		public static AclTree read(ZooKeeper zooKeeper, String rootPath) throws KeeperException, InterruptedException {
			String rootAcl = acl(zooKeeper, rootPath);
			if (rootAcl.equals("none")) {
				return new AclTree(rootAcl, 0, 0);
			}
			long below = 0;
			long other = 0;
			Deque<String> pending = new ArrayDeque<>(children(zooKeeper, rootPath));
			while (!pending.isEmpty()) {
				String path = pending.pop();
				String acl = acl(zooKeeper, path);
				if (acl.equals("none")) {
					continue;
				}
				below++;
				if (!acl.equals(rootAcl) || acl.equals("unreadable")) {
					other++;
				}
				children(zooKeeper, path).forEach(pending::push);
			}
			return new AclTree(rootAcl, below, other);
		}

		private static String acl(ZooKeeper zooKeeper, String path) throws KeeperException, InterruptedException {
			try {
				return format(zooKeeper.getACL(path, null));
			}
			catch (KeeperException.NoNodeException ex) {
				return "none";
			}
			catch (KeeperException.NoAuthException ex) {
				return "unreadable";
			}
		}

		private static List<String> children(ZooKeeper zooKeeper, String path)
				throws KeeperException, InterruptedException {
			try {
				String prefix = path.equals("/") ? "/" : path + "/";
				return zooKeeper.getChildren(path, false).stream().map((child) -> prefix + child).toList();
			}
			catch (KeeperException.NoNodeException | KeeperException.NoAuthException ex) {
				return List.of();
			}
		}

		/**
		 * Return the part of the {@code TLS} line this tree gives.
		 * @return {@code root_acl=... znodes_below=... other_acl_below=...}
		 */
		public String toFields() {
			return "root_acl=" + this.rootAcl + " znodes_below=" + this.znodesBelow + " other_acl_below="
					+ this.otherAclBelow;
		}

	}

	/**
	 * Format an ACL as {@code scheme:id:permissions}, entries separated by commas, the permissions
	 * in ZooKeeper's letters and order ({@code cdrwa}, as {@code zkCli.sh getAcl} shows them).
	 * @param acl the ACL
	 * @return for example {@code x509:CN=zk-lock-app:cdrwa}
	 */
	public static String format(List<ACL> acl) {
		return acl.stream()
			.map((entry) -> entry.getId().getScheme() + ":" + entry.getId().getId() + ":" + permissions(entry.getPerms()))
			.collect(Collectors.joining(","));
	}

	private static String permissions(int perms) {
		StringBuilder letters = new StringBuilder();
		letters.append(((perms & ZooDefs.Perms.CREATE) != 0) ? "c" : "");
		letters.append(((perms & ZooDefs.Perms.DELETE) != 0) ? "d" : "");
		letters.append(((perms & ZooDefs.Perms.READ) != 0) ? "r" : "");
		letters.append(((perms & ZooDefs.Perms.WRITE) != 0) ? "w" : "");
		letters.append(((perms & ZooDefs.Perms.ADMIN) != 0) ? "a" : "");
		return letters.isEmpty() ? "-" : letters.toString();
	}

	/**
	 * Return what an exception of a TLS connection says, as a value of the {@code TLS} line.
	 * @param ex the exception
	 * @return {@code alert:<name>} for a TLS alert from the peer, {@code closed} when the peer
	 * closed the connection during the handshake, {@code timeout}, or
	 * {@code error:<simple class name>}
	 */
	static String outcome(IOException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			Matcher alert = ALERT.matcher(String.valueOf(cause.getMessage()));
			if (alert.find()) {
				return "alert:" + alert.group(1);
			}
		}
		if (ex instanceof SocketTimeoutException) {
			return "timeout";
		}
		if (ex instanceof SSLException && String.valueOf(ex.getMessage()).contains("terminated the handshake")) {
			return "closed";
		}
		return "error:" + ex.getClass().getSimpleName();
	}

	/** What one TLS connection that sent {@code ruok} got. */
	private record Exchange(String protocol, String cipher, String outcome) {
	}

	/**
	 * Connect with the TLS settings of a client configuration, send {@code ruok} and read the
	 * answer until the server closes the connection; each step bounded.
	 */
	private static Exchange ruok(ZKClientConfig config, InetSocketAddress server) throws X509Exception.SSLContextException {
		String protocol = "-";
		String cipher = "-";
		try (ClientX509Util x509 = new ClientX509Util();
				SSLSocket socket = x509.createSSLContextAndOptions(config).createSSLSocket()) {
			socket.connect(server, TIMEOUT_SECONDS * 1000);
			socket.setSoTimeout(TIMEOUT_SECONDS * 1000);
			socket.startHandshake();
			SSLSession session = socket.getSession();
			protocol = session.getProtocol();
			cipher = session.getCipherSuite();
			OutputStream out = socket.getOutputStream();
			out.write("ruok".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = socket.getInputStream();
			String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
			return new Exchange(protocol, cipher, answer.isEmpty() ? "closed" : "answered:" + answer.replace(' ', '_'));
		}
		catch (IOException ex) {
			return new Exchange(protocol, cipher, outcome(ex));
		}
	}

	/**
	 * The TLS settings of the instances (zk-lock's {@code ZooKeeperTlsFiles} for a bundle that names
	 * no protocols or cipher suites): the Netty socket, the stores, host name verification, TLSv1.3
	 * and TLSv1.2.
	 */
	private static ZKClientConfig clientConfig(@Nullable String keyStore, String trustStore, String password) {
		ZKClientConfig config = new ZKClientConfig();
		config.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
		config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET,
				org.apache.zookeeper.ClientCnxnSocketNetty.class.getName());
		try (ClientX509Util x509 = new ClientX509Util()) {
			if (keyStore != null) {
				config.setProperty(x509.getSslKeystoreLocationProperty(), keyStore);
				config.setProperty(x509.getSslKeystorePasswdProperty(), password);
				config.setProperty(x509.getSslKeystoreTypeProperty(), "PKCS12");
			}
			config.setProperty(x509.getSslTruststoreLocationProperty(), trustStore);
			config.setProperty(x509.getSslTruststorePasswdProperty(), password);
			config.setProperty(x509.getSslTruststoreTypeProperty(), "PKCS12");
			config.setProperty(x509.getSslHostnameVerificationEnabledProperty(), "true");
			config.setProperty(x509.getSslEnabledProtocolsProperty(), "TLSv1.3,TLSv1.2");
		}
		return config;
	}

	/**
	 * Observe the server and print the {@code TLS} line.
	 * @param args the server's {@code host:port}, the root path, the key store, the trust store and
	 * their password
	 * @throws Exception if ZooKeeper fails after the session was connected, or the TLS settings
	 * cannot be read
	 */
	public static void main(String[] args) throws Exception {
		if (args.length != 5 || args[0].lastIndexOf(':') < 1) {
			System.err.println("TlsAudit: usage: TlsAudit <host:port> <root-path> <key-store> <trust-store> <password>");
			System.exit(2);
			return;
		}
		String connectString = args[0];
		String rootPath = args[1];
		int colon = connectString.lastIndexOf(':');
		InetSocketAddress server = new InetSocketAddress(connectString.substring(0, colon),
				Integer.parseInt(connectString.substring(colon + 1)));
		ZKClientConfig withCertificate = clientConfig(args[2], args[3], args[4]);
		Exchange certified = ruok(withCertificate, server);
		Exchange anonymous = ruok(clientConfig(null, args[3], args[4]), server);
		CountDownLatch connected = new CountDownLatch(1);
		ZooKeeper zooKeeper = new ZooKeeper(connectString, TIMEOUT_SECONDS * 1000, (event) -> {
			if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
				connected.countDown();
			}
		}, withCertificate);
		AclTree tree;
		try {
			if (!connected.await(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				System.err.println("TlsAudit: no session with the client certificate within " + TIMEOUT_SECONDS
						+ " s (TLS with it: " + certified.outcome() + ")");
				System.exit(1);
				return;
			}
			tree = AclTree.read(zooKeeper, rootPath);
		}
		finally {
			zooKeeper.close();
		}
		System.out.println("TLS protocol=" + certified.protocol() + " cipher=" + certified.cipher()
				+ " with_certificate=" + certified.outcome() + " without_certificate=" + anonymous.outcome() + " "
				+ tree.toFields());
	}

}
