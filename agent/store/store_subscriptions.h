#pragma once

#include "agent/store/episode_record.h"

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kwb::agent {

// What a live subscriber of the trajectory store hears.
struct StoreUpdate {
    enum class Kind {
        EventAppended,  // `event` is the event as stored
        EpisodeChanged, // `episode` is the row as stored: created, updated, finished, forked
        EpisodeDeleted, // only `episodeId` is set
    };
    Kind kind = Kind::EventAppended;
    EpisodeId episodeId = 0;
    EpisodeEvent event;
    EpisodeRecord episode;
};

using StoreCallback = std::function<void(const StoreUpdate&)>;

namespace detail {
struct Subscriber;
struct SubscriberList;
} // namespace detail

// Keeps a callback subscribed while it lives. Ending it (destruction or reset()) waits for a
// call in progress on another thread, so once it returns the callback is never called again
// and may capture objects that die right after. It may end inside its own callback.
class Subscription {
public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept = default;
    Subscription& operator=(Subscription&& other) noexcept;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { reset(); }

    void reset();
    bool active() const { return subscriber_ != nullptr; }

private:
    friend class UpdateBroadcaster;
    Subscription(std::shared_ptr<detail::Subscriber> subscriber,
                 std::weak_ptr<detail::SubscriberList> list)
        : subscriber_(std::move(subscriber)), list_(std::move(list)) {}

    std::shared_ptr<detail::Subscriber> subscriber_;
    // Weak: a subscription may outlive its store.
    std::weak_ptr<detail::SubscriberList> list_;
};

// Hands committed changes to subscribers in commit order, on the writing thread, after the
// writer has let go of the database. A writer calls publish() while it still holds the store's
// lock (that fixes the order) and deliver() after releasing it. Whoever delivers drains the
// whole queue, so writers on several threads never reorder each other's updates; a writer
// waits while another thread's callbacks run, which is why callbacks must be quick (the GUI
// posts to its own thread and returns).
class UpdateBroadcaster {
public:
    UpdateBroadcaster();

    Subscription subscribe(StoreCallback callback);
    void publish(std::vector<StoreUpdate> updates);
    void deliver();

private:
    std::shared_ptr<detail::SubscriberList> list_;
    std::mutex queueMutex_;
    std::deque<StoreUpdate> queue_;
    std::mutex deliveryMutex_;
    // The thread inside deliver(): a callback that writes to the store must not wait for the
    // delivery it is part of; its update is delivered by the loop already running.
    std::atomic<std::thread::id> deliveringThread_{};
};

} // namespace kwb::agent
