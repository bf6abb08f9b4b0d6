import Foundation

/// A named, joinable thread of a `PostgresPool` (its workers and its timer), so that `shutdown()` can
/// wait until each has really ended.
struct PoolThread {
    private let thread: pthread_t

    /// Starts `body` on a new thread with a 1 MiB stack; nil if the system refuses a thread.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> PoolThread? {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        #if canImport(Glibc)
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { argument in
            if let argument { Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().run() }
            return nil
        }, start)
        guard created == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            return nil
        }
        return PoolThread(thread: thread)
        #else
        var thread: pthread_t?
        let created = pthread_create(&thread, &attributes, { argument in
            Unmanaged<Start>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, start)
        guard created == 0, let thread else {
            Unmanaged<Start>.fromOpaque(start).release()
            return nil
        }
        return PoolThread(thread: thread)
        #endif
    }

    /// True when called on this thread.
    var isCurrent: Bool {
        pthread_equal(thread, pthread_self()) != 0
    }

    /// Waits until the thread has ended.
    func join() {
        pthread_join(thread, nil)
    }

    /// Lets the thread end on its own, without anyone joining it.
    func detach() {
        pthread_detach(thread)
    }

    private final class Start {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }

        func run() {
            // Foundation names the underlying thread (Glibc does not export `pthread_setname_np`).
            Thread.current.name = name
            body()
        }
    }
}
