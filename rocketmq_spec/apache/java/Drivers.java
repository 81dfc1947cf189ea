package rmqspec.drivers;

import org.apache.rocketmq.remoting.RPCHook;

/** What the drivers share. */
final class Drivers {
    /** A client's default is 3 s, which a cold JVM's first send (route lookup, connect) can exceed on a loaded
     * machine; the drivers judge what the broker does, not how fast a cold client is. */
    static final int SEND_TIMEOUT_MS = 15000;

    private Drivers() {
    }

    /** The release's ACL 1.0 signing hook (org.apache.rocketmq.acl.common.AclClientRPCHook) for these keys. */
    static RPCHook aclHook(String accessKey, String secretKey) throws ReflectiveOperationException {
        Class<?> credentials = Class.forName("org.apache.rocketmq.acl.common.SessionCredentials");
        Object session = credentials.getConstructor(String.class, String.class).newInstance(accessKey, secretKey);
        Class<?> hook = Class.forName("org.apache.rocketmq.acl.common.AclClientRPCHook");
        return (RPCHook) hook.getConstructor(credentials).newInstance(session);
    }
}
